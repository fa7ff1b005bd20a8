"""attnviz.show and save_html take transformers' outputs as a bertviz user has them: a model's output object as it
comes, an encoder–decoder's three attentions in one call (bertviz's model_view names too), empty attentions with
the fix (attn_implementation="eager"), and bf16/fp16 weights without a false "rows do not sum to 1" warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import transformers
from helpers_tiny_models import load_hf

import attnviz
from attnviz import AttnvizError, AttnvizWarning
from attnviz.draw.heatmap_payload import decode_payload
from attnviz.draw.payload_frames import unwrap
from attnviz.notebook.content import document_of


def sets_of(document: bytes) -> list[dict]:
    return unwrap(document, lambda h: h["parts"])[0]["sets"]


@pytest.fixture(scope="module")
def bert(tiny_model_folder):
    """A tiny eager BERT, its tokens and its output with output_attentions=True."""
    model = load_hf(tiny_model_folder("bert"))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tiny_model_folder("bert")))
    enc = tokenizer("the cat sat on the mat.", return_tensors="pt")
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    return model, tokenizer.convert_ids_to_tokens(enc["input_ids"][0]), out, enc


@pytest.fixture(scope="module")
def bart(tiny_model_folder):
    """A tiny eager BART run on a source and a target: its Seq2SeqModelOutput with the three attentions."""
    folder = tiny_model_folder("bart")
    model = load_hf(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    source = tokenizer("the cat sat on the mat.", return_tensors="pt")["input_ids"]
    target = tokenizer("a dog ran", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model(input_ids=source, decoder_input_ids=target, output_attentions=True)
    return out, tokenizer.convert_ids_to_tokens(source[0]), tokenizer.convert_ids_to_tokens(target[0])


def test_a_model_output_as_it_comes_draws_its_attentions(bert):
    _, tokens, out, _ = bert
    assert isinstance(out, transformers.utils.ModelOutput)
    from_output = document_of(out, tokens=tokens)
    (s,) = sets_of(from_output)
    assert s["row_labels"] == tokens and len(s["layers"]) == len(out.attentions)
    assert [x["grids"] for x in sets_of(document_of(out.attentions, tokens=tokens))] == [s["grids"]]
    assert b"BaseModelOutputWithPoolingAndCrossAttentions" in from_output  # the title names what was given


def test_empty_attentions_say_to_load_the_model_eager(bert, tiny_model_folder):
    _, _, _, enc = bert
    sdpa = transformers.AutoModel.from_pretrained(str(tiny_model_folder("bert")), attn_implementation="sdpa").eval()
    with torch.no_grad():
        out = sdpa(**enc, output_attentions=True)
    assert out.attentions == ()  # transformers' default attention keeps no weights
    for given in (out, out.attentions):
        with pytest.raises(AttnvizError, match='attn_implementation="eager"') as err:
            attnviz.save_html(given, "/dev/null")
        assert "from_pretrained(name, attn_implementation=\"eager\")" in str(err.value)
        assert "output_attentions=True" in str(err.value)
    with torch.no_grad():
        without = sdpa(**enc)  # output_attentions not asked for
    with pytest.raises(AttnvizError, match="holds no attentions.*eager"):
        document_of(without)


def test_an_encoder_decoders_output_draws_cross_decoder_and_encoder_attention(bart):
    out, source, target = bart
    sets = sets_of(document_of(out, encoder_tokens=source, decoder_tokens=target))
    assert [s["name"] for s in sets] == ["cross-attention (decoder queries → encoder keys)", "decoder self-attention",
                                        "encoder self-attention"]
    assert (sets[0]["row_labels"], sets[0]["col_labels"]) == (target, source)
    assert sets[1]["row_labels"] == sets[1]["col_labels"] == target
    assert sets[2]["row_labels"] == sets[2]["col_labels"] == source


def test_the_three_attentions_in_one_call_by_our_names_and_bertvizs_draw_the_same(bart):
    out, source, target = bart
    ours = document_of(encoder_attentions=out.encoder_attentions, decoder_attentions=out.decoder_attentions,
                       cross_attentions=out.cross_attentions, encoder_tokens=source, decoder_tokens=target)
    bertviz = document_of(encoder_attention=out.encoder_attentions, decoder_attention=out.decoder_attentions,
                          cross_attention=out.cross_attentions, encoder_tokens=source, decoder_tokens=target)
    assert ours == bertviz
    grids = [s["grids"] for s in sets_of(ours)]
    assert grids == [s["grids"] for s in sets_of(document_of(out, encoder_tokens=source, decoder_tokens=target))]
    # each set's first grid is that attention's own layer 0, as the raw call draws it; among three, its name says
    # which attention it is (what a screen reader hears as the heatmap's name)
    alone = document_of(out.cross_attentions, tokens=target, key_tokens=source)
    (meta, cells), (meta_of_three, cells_of_three) = (
        decode_payload(unwrap(doc, lambda h: h["parts"])[1][grid]) for doc, grid in ((alone, sets_of(alone)[0]["grids"][0]),
                                                                                   (ours, grids[0][0])))
    np.testing.assert_array_equal(cells, cells_of_three)
    assert {k: v for k, v in meta.items() if k != "label"} == {k: v for k, v in meta_of_three.items() if k != "label"}
    assert meta_of_three["label"] == f"{sets_of(ours)[0]['name']}, layer 0: {len(meta['titles'])} heads, weights after softmax"


def test_the_widget_and_the_saved_page_take_the_three_attentions(bart, tmp_path):
    out, source, target = bart
    widget = attnviz.show(encoder_attention=out.encoder_attentions, decoder_attention=out.decoder_attentions,
                          cross_attention=out.cross_attentions, encoder_tokens=source, decoder_tokens=target)
    assert len(sets_of(widget.document)) == 3
    page = attnviz.save_html(out, tmp_path / "bart.html", encoder_tokens=source, decoder_tokens=target)
    assert "attnviz · Seq2SeqModelOutput" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("kw, match", [
    ({"tokens": ["x"]}, "encoder_tokens= \\(the source\\) and decoder_tokens="),
    ({"encoder_tokens": ["x"]}, "There are 1 encoder_tokens but the attention has"),
])
def test_an_encoder_decoders_tokens_are_named_and_checked(bart, kw, match):
    out, _, _ = bart
    with pytest.raises(AttnvizError, match=match):
        document_of(out, **kw)


@pytest.mark.filterwarnings("ignore::attnviz.AttnvizWarning")  # the cut encoder rows no longer sum to 1
def test_mismatched_or_doubled_encoder_decoder_inputs_are_refused(bart):
    out, _, _ = bart
    short_encoder = tuple(a[..., :-1, :-1] for a in out.encoder_attentions)
    with pytest.raises(AttnvizError, match="cross_attentions has .* keys .* but the encoder attentions have"):
        document_of(encoder_attentions=short_encoder, cross_attentions=out.cross_attentions)
    with pytest.raises(AttnvizError, match="name the same attentions"):
        document_of(cross_attentions=out.cross_attentions, cross_attention=out.cross_attentions)
    with pytest.raises(AttnvizError, match="not both"):
        document_of(out.encoder_attentions, cross_attentions=out.cross_attentions)


def peaked(dtype: torch.dtype) -> torch.Tensor:
    """Softmax rows computed in float32 then stored in dtype, as transformers' eager attention does: peaked rows,
    whose largest weight (near 1) loses the most to rounding."""
    scores = torch.randn(2, 4, 64, 64, generator=torch.Generator().manual_seed(0)) * 6
    return torch.softmax(scores, dim=-1).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_weights_get_a_tolerance_fit_for_their_precision(dtype):
    a = peaked(dtype)
    off = float((a.double().sum(-1) - 1).abs().max())
    if dtype == torch.bfloat16:
        assert off > 1e-3  # float32's tolerance would warn about these true softmax rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        document_of(a)
        document_of(tuple(layer[None] for layer in a))  # transformers' per-layer tuple keeps its dtype too
    wrong = a.clone()
    wrong[0, 0, 3] *= 0.9  # a row that no softmax gave, in the same precision
    with pytest.warns(AttnvizWarning, match="1 of 512 attention rows do not sum to 1"):
        document_of(wrong)


def test_a_bf16_eager_models_own_attentions_draw_without_a_warning(bert, tiny_model_folder):
    _, tokens, _, enc = bert
    model = transformers.AutoModel.from_pretrained(str(tiny_model_folder("bert")), attn_implementation="eager",
                                                   dtype=torch.bfloat16).eval()
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    assert out.attentions[0].dtype == torch.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        attnviz.show(out, tokens=tokens)
