"""Every training script's --quick mode runs in seconds, writes a folder attnviz loads, and is reproducible.

(attnviz-tiny-llama's quick run is tested beside its model in tests/engine/test_tiny_llama.py.)
"""

import pytest
import torch
from safetensors.torch import load_file

import attnviz
from attnviz.engine.gru_seq2seq import read_gru_folder
from attnviz.engine.models.seq2seq import EncoderDecoderModel
from attnviz.training import train_gru_seq2seq, train_tiny_bart


def same_weights(a, b):
    a, b = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    assert a.keys() == b.keys()
    return all(torch.equal(a[k], b[k]) for k in a)


def test_gru_quick_run_writes_both_models_that_the_engine_runs(tmp_path):
    reports = train_gru_seq2seq.main(["--quick", "--out", str(tmp_path), "--threads", "1"])
    assert set(reports) == {"attnviz-gru-bottleneck", "attnviz-gru-attention"}
    for name, report in reports.items():
        assert report["steps"] == 3 and torch.isfinite(torch.tensor(report["final_loss"]))
        folder = tmp_path / name
        assert {"config.json", "model.safetensors", "tokenizer.json", "training.json"} <= {p.name for p in folder.iterdir()}
        model = read_gru_folder(folder)
        out = model.translate("three hundred forty two , seven", max_len=5)
        assert model.cfg.attention == (name == "attnviz-gru-attention")
        assert (out.alignment is not None) == model.cfg.attention
        assert out.source_tokens == ["<s>", "three", "hundred", "forty", "two", ",", "seven", "</s>"]


def test_gru_training_is_reproducible(tmp_path):
    for run in ("a", "b"):
        train_gru_seq2seq.main(["--quick", "--which", "attention", "--out", str(tmp_path / run), "--seed", "3"])
    assert same_weights(tmp_path / "a" / "attnviz-gru-attention", tmp_path / "b" / "attnviz-gru-attention")


def test_bart_quick_run_writes_a_bart_folder_that_attnviz_loads(tmp_path):
    report = train_tiny_bart.main(["--quick", "--out", str(tmp_path / "a"), "--seed", "3"])
    assert report["steps"] == 5 and torch.isfinite(torch.tensor(report["final_loss"]))
    model = attnviz.load_model(str(tmp_path / "a"))
    assert isinstance(model, EncoderDecoderModel) and (model.n_layers, model.n_decoder_layers) == (2, 2)
    res = model.run("forty two", target="42")
    assert res.tokens == ["</s>", "<s>", "4", "2"] and res.source_tokens == ["<s>", "forty", "two", "</s>"]
    train_tiny_bart.main(["--quick", "--out", str(tmp_path / "b"), "--seed", "3"])
    assert same_weights(tmp_path / "a", tmp_path / "b")


@pytest.mark.parametrize("script", [train_gru_seq2seq, train_tiny_bart])
def test_quick_mode_is_a_handful_of_steps(script, tmp_path, capsys):
    script.main(["--quick", "--out", str(tmp_path)] + (["--which", "bottleneck"] if script is train_gru_seq2seq else []))
    assert "saved to" in capsys.readouterr().out
