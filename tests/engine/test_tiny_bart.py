"""attnviz-tiny-bart: shipped weights checked by SHA-256 and loaded by name through the BART loader; its
cross-, decoder self- and encoder attentions equal transformers' eager ones; greedy decoding (attnviz's
from-scratch one, which equals transformers') writes held-out numbers right at the rate docs/models.md states."""

import json
import shutil

import pytest
import torch
from transformers import BartForConditionalGeneration

import attnviz
from attnviz.engine.models import loading
from attnviz.engine.models.seq2seq import EncoderDecoderModel
from attnviz.errors import AttnvizError
from attnviz.lessons.why_attention import tiny_bart
from attnviz.paths import MODELS
from attnviz.tasks.number_words import build_tokenizer, held_out_examples
from attnviz.training import train_tiny_bart

NAME = "attnviz-tiny-bart"
ATOL = 1e-5
STATED_EXACT_MATCH = 0.90  # docs/models.md's floor for held-out greedy exact match (measured: see training.json)


@pytest.fixture(scope="module")
def bart():
    return attnviz.load_model(NAME)


@pytest.fixture(scope="module")
def bart_hf():
    folder = loading.shipped_model_folder(NAME)
    return BartForConditionalGeneration.from_pretrained(str(folder), attn_implementation="eager",
                                                        dtype=torch.float32).eval()


def test_loads_by_name_as_a_small_bart(bart):
    assert isinstance(bart, EncoderDecoderModel) and bart.family == "bart"
    assert (bart.n_layers, bart.n_decoder_layers, bart.n_heads) == (2, 2, 4)
    folder = loading.shipped_model_folder(NAME)
    assert (folder / "model.safetensors").stat().st_size < 2 * 2**20
    assert json.loads((folder / "training.json").read_text())["name"] == NAME


@pytest.mark.parametrize("example", held_out_examples(4, seed=123), ids=lambda ex: ex.target)
def test_attentions_equal_transformers_eager(bart, bart_hf, example):
    res = bart.run(example.source, target=example.target)
    with torch.no_grad():
        out = bart_hf(input_ids=torch.tensor([res.source_token_ids]), decoder_input_ids=torch.tensor([res.token_ids]),
                      output_attentions=True)
    stack = lambda atts: torch.stack([a[0] for a in atts])
    for ours, theirs in ((res.cross_attentions, out.cross_attentions), (res.attentions, out.decoder_attentions),
                         (res.encoder_attentions, out.encoder_attentions)):
        theirs = stack(theirs)
        assert ours.shape == theirs.shape and (ours - theirs).abs().max().item() <= ATOL


def test_from_scratch_greedy_equals_transformers_greedy(bart, bart_hf):
    examples = held_out_examples(24, seed=321)
    tok = build_tokenizer(train_tiny_bart.MAX_TOKENS)
    tok.no_truncation()
    src, mask, _, _ = train_tiny_bart.batch_tensors(tok, examples)
    theirs = train_tiny_bart.greedy(bart_hf, src, mask, tiny_bart.MAX_OUTPUT).tolist()
    for ex, row in zip(examples, theirs, strict=True):
        ours = tiny_bart.greedy_ids(bart, bart.encode(ex.source).ids)
        assert ours == row[:len(ours)], ex.source


def test_greedy_is_right_on_held_out_numbers_at_the_readme_rate(bart):
    examples = held_out_examples(200, seed=tiny_bart_seed())
    hits = tiny_bart.exact_match(bart, examples)
    assert sum(hits) / len(hits) >= STATED_EXACT_MATCH


def tiny_bart_seed() -> int:
    return 30_000  # not the training script's own held-out seed (10_000): a second, independent draw


def test_translate_returns_the_digits_and_the_cross_attention(bart):
    out = tiny_bart.translate("three hundred forty two thousand seven , ninety", bart)
    assert out.output_text == "342007, 90"
    n_dec, n_src = len(out.decoder_labels), len(out.source_labels)
    assert out.cross_attentions.shape == (2, 4, n_dec, n_src)
    assert out.decoder_labels[:2] == ["</s>", "<s>"] and out.decoder_labels[2:] == out.output_tokens
    assert torch.allclose(out.cross_attentions.sum(-1), torch.ones(2, 4, n_dec), atol=1e-5)


def test_a_tampered_or_missing_copy_is_refused(tmp_path):
    copy = tmp_path / NAME
    shutil.copytree(MODELS / NAME, copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(AttnvizError, match="do not match their known SHA-256"):
        loading.shipped_model_folder(NAME, root=tmp_path)
    weights.unlink()
    with pytest.raises(AttnvizError, match="missing"):
        loading.shipped_model_folder(NAME, root=tmp_path)


def test_words_outside_the_task_are_named_in_the_error(bart):
    with pytest.raises(AttnvizError, match="does not know 'cats'"):
        tiny_bart.translate("forty two cats", bart)
