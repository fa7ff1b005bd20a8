"""attnviz-tiny-llama: the training script's quick mode runs and its output loads; the shipped weights are
checked by SHA-256; attnviz's from-scratch forward and generation equal transformers' on the trained model."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file
from transformers import LlamaForCausalLM

import attnviz
from attnviz.engine.models import loading
from attnviz.engine.truth import check_generation_against_transformers
from attnviz.errors import AttnvizError
from attnviz.paths import MODELS
from attnviz.training import train_tiny_llama

TEXT = "the cat sat on the mat . the dog sat on the door . the cat sat on the mat ."


@pytest.fixture(scope="module")
def quick_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick-tiny-llama")
    report = train_tiny_llama.main(["--quick", "--out", str(out), "--seed", "3", "--threads", "1"])
    return out, report


def test_quick_training_writes_a_llama_folder_that_attnviz_loads(quick_folder):
    out, report = quick_folder
    assert {"config.json", "model.safetensors", "tokenizer.json", "training.json"} <= {p.name for p in out.iterdir()}
    assert report["steps"] == 5 and torch.isfinite(torch.tensor(report["final_loss"]))
    assert 0.0 <= report["held_out_accuracy"]["second_half"] <= 1.0
    model = attnviz.load_model(str(out))
    assert model.family == "llama" and model.n_kv_heads < model.n_heads
    res = model.run(TEXT)
    assert res.tokens[:3] == ["[BOS]", "the", "cat"]
    assert res.attentions.shape == (model.n_layers, model.n_heads, len(res.tokens), len(res.tokens))


def test_training_is_reproducible(quick_folder, tmp_path):
    out, _ = quick_folder
    train_tiny_llama.main(["--quick", "--out", str(tmp_path), "--seed", "3", "--threads", "1"])
    a, b = load_file(str(out / "model.safetensors")), load_file(str(tmp_path / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_shipped_weights_match_their_hash_and_fit_the_size_budget():
    folder = loading.shipped_model_folder("attnviz-tiny-llama")
    assert sum(p.stat().st_size for p in folder.iterdir()) <= 10 * 2**20
    report = json.loads((folder / "training.json").read_text())
    shape = report["shape"]
    assert report["name"] == "attnviz-tiny-llama" and shape["num_key_value_heads"] < shape["num_attention_heads"]


def test_a_tampered_copy_is_refused_with_a_clear_message(tmp_path):
    copy = tmp_path / "attnviz-tiny-llama"
    shutil.copytree(MODELS / "attnviz-tiny-llama", copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01  # one bit of one weight
    weights.write_bytes(bytes(data))
    with pytest.raises(AttnvizError, match="do not match their known SHA-256"):
        loading.shipped_model_folder("attnviz-tiny-llama", root=tmp_path)
    (copy / "model.safetensors").unlink()
    with pytest.raises(AttnvizError, match="missing"):
        loading.shipped_model_folder("attnviz-tiny-llama", root=tmp_path)


def test_shipped_attentions_equal_transformers_eager(tiny_llama):
    hf = LlamaForCausalLM.from_pretrained(tiny_llama.source, attn_implementation="eager", dtype=torch.float32).eval()
    res = tiny_llama.run(TEXT)
    with torch.no_grad():
        out = hf(torch.tensor([res.token_ids]), output_attentions=True)
    theirs = torch.stack([a[0] for a in out.attentions])  # (L, H, n, n)
    assert (theirs - res.attentions).abs().max().item() <= 1e-5


def test_shipped_generation_with_and_without_cache_equals_transformers_greedy(tiny_llama):
    prompt = "the cat sat on the mat and the dog ran to the door . the cat sat on"
    cached = tiny_llama.generate(prompt, max_new_tokens=12, cache=True)
    full = tiny_llama.generate(prompt, max_new_tokens=12, cache=False)
    assert cached.token_ids == full.token_ids
    assert max((a.attention - b.attention).abs().max().item() for a, b in zip(cached.steps, full.steps, strict=True)) <= 1e-5
    check = check_generation_against_transformers(tiny_llama, cached)
    assert check.matches and len(check.theirs) == 12, (check.ours, check.theirs)
