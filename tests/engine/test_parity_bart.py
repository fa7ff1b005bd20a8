"""BART, the encoder–decoder: our from-scratch cross-, decoder self- and encoder self-attentions
against transformers' eager ones, on a tiny random BART saved with save_pretrained and loaded back
through attnviz.load_model(folder). transformers is fed our very ids (source ids, decoder input ids).
"""

import json
import shutil

import pytest
import torch
import transformers
from helpers_tiny_models import bart_config, load_hf, roberta_tokenizer, widen_weights
from transformers import AutoTokenizer
from transformers.models.bart.modeling_bart import shift_tokens_right

import attnviz
from attnviz.engine.masks import causal_mask, window_mask
from attnviz.engine.models.seq2seq import EncoderDecoderModel
from attnviz.engine.truth import check_against_transformers

ATOL = 1e-5
PAIRS = [
    ("The cat sat on the mat.", "A dog ran after the cat!"),
    ("Queries meet keys; values are averaged by the weights.", "the the the"),
    ("I love my 🐈 and 🍕!!", "Attention lets every token look at every other token."),
]


@pytest.fixture(scope="module")
def bart_folder(tiny_model_folder):
    return tiny_model_folder("bart")


@pytest.fixture(scope="module")
def bart(bart_folder):
    return attnviz.load_model(str(bart_folder))


@pytest.fixture(scope="module")
def bart_hf(bart_folder):
    return load_hf(bart_folder)


def hf_seq2seq(hf, source_ids, decoder_ids):
    with torch.no_grad():
        out = hf(input_ids=torch.tensor([source_ids]), decoder_input_ids=torch.tensor([decoder_ids]),
                 output_attentions=True)
    stack = lambda atts: torch.stack([a[0] for a in atts])
    return stack(out.cross_attentions), stack(out.decoder_attentions), stack(out.encoder_attentions), out


def max_abs_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return (a - b).abs().max().item()


def test_loads_as_an_encoder_decoder(bart):
    assert isinstance(bart, EncoderDecoderModel) and bart.family == "bart"
    assert (bart.n_layers, bart.n_heads, bart.d_model) == (2, 4, 32)  # the encoder
    assert (bart.n_decoder_layers, bart.n_decoder_heads) == (3, 2)


@pytest.mark.parametrize("source,target", PAIRS)
def test_every_attention_matches_transformers(bart, bart_hf, source, target):
    res = bart.run(source, target=target)
    S, T = len(res.source_tokens), len(res.tokens)
    assert res.cross_attentions.shape == (3, 2, T, S)
    assert res.attentions.shape == (3, 2, T, T)
    assert res.encoder_attentions.shape == (2, 4, S, S)
    cross, dec, enc, out = hf_seq2seq(bart_hf, res.source_token_ids, res.token_ids)
    assert max_abs_diff(res.cross_attentions, cross) <= ATOL
    assert max_abs_diff(res.attentions, dec) <= ATOL
    assert max_abs_diff(res.encoder_attentions, enc) <= ATOL
    assert max_abs_diff(res.hidden, out.last_hidden_state[0]) <= 1e-4
    assert res.cross_attentions.amax() > 3.0 / S  # the seeded noise bites: not near-uniform


def test_decoder_input_is_the_target_shifted_right_as_transformers_does(bart, bart_folder):
    source, target = PAIRS[0]
    res = bart.run(source, target=target)
    hf_tok = AutoTokenizer.from_pretrained(str(bart_folder))
    labels = torch.tensor([hf_tok(target)["input_ids"]])
    assert res.target_token_ids == labels[0].tolist()
    assert res.token_ids == shift_tokens_right(labels, 1, 2)[0].tolist()
    assert res.token_ids[0] == 2 and res.tokens[0] == "</s>"  # decoder_start_token_id
    assert res.source_token_ids == hf_tok(source)["input_ids"]
    assert len(res.tokens) == len(res.labels) == len(res.token_ids)


def test_decoder_self_attention_is_causal_and_cross_is_not(bart):
    res = bart.run(PAIRS[0][0], target=PAIRS[0][1])
    assert (res.attentions.triu(diagonal=1) == 0).all()
    assert (res.cross_attentions > 0).all()  # every target position reads every source token
    for atts in (res.attentions, res.cross_attentions, res.encoder_attentions):
        assert torch.allclose(atts.sum(-1), torch.ones(atts.shape[:-1]), atol=1e-5)


def test_mask_applies_to_decoder_self_attention_only_and_scale_to_all(bart):
    base = bart.run(PAIRS[0][0], target=PAIRS[0][1])
    windowed = bart.run(PAIRS[0][0], target=PAIRS[0][1], mask="window:1")
    T = len(base.tokens)
    allowed = causal_mask(T) & window_mask(T, 1)
    assert torch.equal(windowed.mask, allowed)
    assert (windowed.attentions[..., ~allowed] == 0).all()
    assert torch.equal(windowed.encoder_attentions, base.encoder_attentions)  # the encoder never sees the mask
    assert windowed.cross_attentions.shape == base.cross_attentions.shape
    assert not torch.allclose(windowed.cross_attentions, base.cross_attentions)  # later layers read a changed stream
    unscaled = bart.run(PAIRS[0][0], target=PAIRS[0][1], scale=False)
    assert unscaled.scale == 1.0
    assert max_abs_diff(unscaled.cross_attentions[0], base.cross_attentions[0]) > 1e-3
    assert max_abs_diff(unscaled.encoder_attentions[0], base.encoder_attentions[0]) > 1e-3


def test_truth_check_covers_every_kind_of_attention(bart):
    check = check_against_transformers(bart, PAIRS[0][0], target=PAIRS[0][1])
    assert check.matches and set(check.parts) == {"encoder", "decoder", "cross"}
    assert check.max_abs_diff == max(check.parts.values()) <= ATOL


def test_run_without_target_runs_the_encoder_and_says_so(bart, bart_hf):
    res = bart.run(PAIRS[0][0])
    assert any("encoder" in note for note in res.notes)
    _, _, enc, _ = hf_seq2seq(bart_hf, res.token_ids, [2])
    assert max_abs_diff(res.attentions, enc) <= ATOL
    assert check_against_transformers(bart, PAIRS[0][0]).matches


def test_scale_embedding_off_also_matches(tmp_path):
    tok = roberta_tokenizer()
    config = bart_config(len(tok))
    config.scale_embedding = False
    torch.manual_seed(7)
    hf = transformers.BartModel(config)
    widen_weights(hf, 7)
    hf.save_pretrained(tmp_path, safe_serialization=True)
    tok.save_pretrained(tmp_path)
    res = attnviz.load_model(str(tmp_path)).run(PAIRS[1][0], target=PAIRS[1][1])
    cross, dec, _, _ = hf_seq2seq(load_hf(tmp_path), res.source_token_ids, res.token_ids)
    assert max_abs_diff(res.cross_attentions, cross) <= ATOL and max_abs_diff(res.attentions, dec) <= ATOL


# ---- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("source,target,which", [("", "a cat", "Source"), ("a cat", "   ", "Target"),
                                                 ("a cat", "\u200b", "Target")])
def test_empty_source_or_target_is_a_clear_error(bart, source, target, which):
    with pytest.raises(attnviz.AttnvizError, match=which):
        bart.run(source, target=target)


def test_target_longer_than_the_model_allows_is_an_error(bart):
    with pytest.raises(attnviz.AttnvizError, match="target is longer"):
        bart.run("a cat", target="the cat " * 80)


def test_source_longer_than_the_model_allows_is_cut_with_a_note(bart):
    res = bart.run("the cat " * 80, target="a dog")
    assert res.truncated and len(res.source_tokens) == bart.max_tokens
    assert any("source was longer" in note for note in res.notes)


def test_padding_mask_is_refused_on_an_encoder_decoder(bart):
    with pytest.raises(attnviz.AttnvizError, match="Padding"):
        bart.run(PAIRS[0][0], target=PAIRS[0][1], mask="padding:2")


def test_target_on_a_model_without_cross_attention_is_a_clear_error(bundled_model):
    with pytest.raises(attnviz.AttnvizError, match="no cross-attention"):
        bundled_model.run("The cat sat.", target="Le chat")


def test_pre_ln_bart_variant_is_refused(bart_folder, tmp_path):
    shutil.copytree(bart_folder, tmp_path / "mbart-like")
    cfg_path = tmp_path / "mbart-like" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["normalize_before"] = True
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(attnviz.AttnvizError, match="pre-LN"):
        attnviz.load_model(str(tmp_path / "mbart-like"))
