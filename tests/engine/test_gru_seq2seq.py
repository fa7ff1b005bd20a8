"""The from-scratch GRU encoder–decoder (engine/gru_seq2seq.py): its written-out equations equal torch's
GRU modules that trained it, and the shipped weights are checked by SHA-256 before they are read."""

import shutil

import pytest
import torch

from attnviz.engine.gru_seq2seq import gru_cell, load_gru_model
from attnviz.engine.shipped import shipped_model_folder
from attnviz.errors import AttnvizError
from attnviz.paths import MODELS
from attnviz.tasks.number_words import build_tokenizer, training_examples, vocabulary
from attnviz.training.train_gru_seq2seq import SHAPE, Seq2SeqGRU, batch_tensors, runner_of

NAMES = ["attnviz-gru-bottleneck", "attnviz-gru-attention"]


def test_gru_cell_equals_torch():
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(5, 7)
    x, h = torch.randn(3, 5), torch.randn(3, 7)
    ours = gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    torch.testing.assert_close(ours, cell(x, h), atol=1e-6, rtol=0)


@pytest.mark.parametrize("attention", [False, True])
def test_from_scratch_logits_equal_the_training_module(attention):
    torch.manual_seed(1)
    model = Seq2SeqGRU(len(vocabulary()), attention, **SHAPE).eval()
    tok = build_tokenizer(96)
    tok.no_truncation()
    src, lengths, tgt_in, _ = batch_tensors(tok, training_examples(12, torch.Generator().manual_seed(2)))
    assert lengths.min() < lengths.max()  # padded rows: the backward pass must start at each row's own end
    with torch.no_grad():
        theirs = model(src, lengths, tgt_in)
    ours = runner_of(model, tok, "test").teacher_forced_logits(src, lengths, tgt_in)
    assert (ours - theirs).abs().max().item() <= 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_shipped_models_load_checked_and_small(name):
    model = load_gru_model(name)
    folder = shipped_model_folder(name)
    assert (folder / "model.safetensors").stat().st_size < 2 * 2**20
    assert model.cfg.attention == (name == "attnviz-gru-attention")
    out = model.translate("seven")
    assert out.output_text == "7" and out.finished


def test_alignment_rows_are_weights_over_the_source():
    out = load_gru_model("attnviz-gru-attention").translate("three hundred forty two thousand seven , ninety")
    assert out.alignment.shape == (len(out.output_tokens), len(out.source_tokens))
    assert torch.allclose(out.alignment.sum(-1), torch.ones(len(out.output_tokens)), atol=1e-5)
    assert (out.alignment >= 0).all()


def test_a_tampered_or_missing_copy_is_refused(tmp_path):
    name = "attnviz-gru-attention"
    copy = tmp_path / name
    shutil.copytree(MODELS / name, copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(AttnvizError, match="do not match their known SHA-256"):
        shipped_model_folder(name, root=tmp_path)
    weights.unlink()
    with pytest.raises(AttnvizError, match="missing"):
        shipped_model_folder(name, root=tmp_path)
    with pytest.raises(AttnvizError, match="No shipped GRU model 'attnviz-gru-nothing'.*gru-bottleneck, gru-attention"):
        load_gru_model("attnviz-gru-nothing")
    with pytest.raises(AttnvizError, match="No shipped GRU model 'tiny-llama'"):
        load_gru_model("tiny-llama")


def test_empty_or_too_long_text_is_a_clear_error():
    model = load_gru_model("attnviz-gru-bottleneck")
    with pytest.raises(AttnvizError, match="Type a number"):
        model.translate("   ")
    with pytest.raises(AttnvizError, match="longer than"):
        model.translate("seven " * 200)


def test_words_outside_the_task_are_named_in_the_error():
    model = load_gru_model("attnviz-gru-attention")
    with pytest.raises(AttnvizError, match="does not know 'and', 'Apples'"):
        model.translate("one hundred and five Apples")
