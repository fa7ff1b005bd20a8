"""Llama, Qwen2 and Mistral: the from-scratch RoPE/GQA stack against transformers' eager attentions.

Tiny random models (see helpers_tiny_models.TINY_DECODERS) cover GQA and MQA, head_dim from the
config, non-default rope theta, llama3 and (legacy-config) linear rope scaling, tied embeddings,
every bias switch and Mistral's sliding window. transformers is fed our own token ids.
"""

import json

import pytest
import torch
from helpers_tiny_models import TINY_DECODERS, load_hf_causal_lm

import attnviz
from attnviz.engine.masks import causal_mask, window_mask
from attnviz.engine.rope import apply_rope, rope_angles, rope_frequencies
from attnviz.engine.truth import check_against_transformers
from attnviz.errors import AttnvizError

ATOL_ATTENTION = 1e-5
ATOL_LOGITS = 1e-4
NAMES = sorted(TINY_DECODERS) + ["llama-legacy"]
TEXTS = ["The cat sat on the mat. A dog ran after the cat, and the cat ran up a tree!", "I love my 🐈 and 🍕!!"]
EXPECTED = {  # name -> (family, n_kv_heads, d_head, rope type)
    "llama": ("llama", 2, 16, "default"),
    "llama3-tied": ("llama", 1, 8, "llama3"),
    "qwen2": ("qwen2", 1, 8, "default"),
    "qwen2-windowed": ("qwen2", 2, 8, "default"),
    "mistral": ("mistral", 2, 8, "default"),
    "llama-legacy": ("llama", 2, 16, "linear"),
}


@pytest.fixture(scope="module")
def decoders(tiny_decoder_folder):
    """name -> (our model, transformers' causal LM), each loaded once for the module."""
    return {name: (attnviz.load_model(str(tiny_decoder_folder(name))), load_hf_causal_lm(tiny_decoder_folder(name)))
            for name in NAMES}


def hf_forward(hf, ids: list[int]):
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]), out.logits[0]  # (L, H, n, n), (n, V)


@pytest.mark.parametrize("name", NAMES)
def test_loads_as_its_family_with_gqa(decoders, name):
    model, _ = decoders[name]
    family, n_kv, d_head, rope_type = EXPECTED[name]
    assert (model.family, model.n_layers, model.n_heads, model.n_kv_heads, model.d_head) == (family, 2, 4, n_kv, d_head)
    assert model.cfg.rope_type == rope_type


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", TEXTS, ids=["sentence", "emoji"])
def test_attentions_and_logits_match_transformers(decoders, name, text):
    model, hf = decoders[name]
    res = model.run(text)
    theirs, logits = hf_forward(hf, res.token_ids)
    assert res.attentions.shape == theirs.shape == (2, 4, len(res.tokens), len(res.tokens))
    assert (res.attentions - theirs).abs().max() <= ATOL_ATTENTION
    assert (model.logits(res.hidden) - logits).abs().max() <= ATOL_LOGITS
    n = len(res.tokens)
    assert res.attentions.amax() > 0.99 and res.attentions[:, :, 1:, :].amax() > 3.0 / n  # weights far from uniform


def test_scaled_rope_types_change_the_frequencies(decoders):
    scaled, _ = decoders["llama3-tied"]
    default = rope_frequencies(scaled.d_head, 50000.0)
    assert torch.allclose(scaled.cfg.inv_freq[:1], default[:1])  # fast frequencies kept
    assert torch.allclose(scaled.cfg.inv_freq[-1:], default[-1:] / 8.0)  # slow ones divided by the factor
    legacy, _ = decoders["llama-legacy"]
    assert torch.allclose(legacy.cfg.inv_freq, rope_frequencies(16, 30000.0) / 2.0)


def test_legacy_config_form_is_read(tiny_decoder_folder):
    config = json.loads((tiny_decoder_folder("llama-legacy") / "config.json").read_text())
    assert "rope_parameters" not in config and config["rope_scaling"]["type"] == "linear"


def test_qwen2_windows_apply_from_max_window_layers_on_as_in_transformers(decoders):
    model, hf = decoders["qwen2-windowed"]
    res = model.run(TEXTS[0])
    theirs, _ = hf_forward(hf, res.token_ids)
    assert model.cfg.windows == (None, 3)
    n = len(res.tokens)
    beyond = ~torch.ones(n, n, dtype=torch.bool).triu(-2)  # keys more than 2 before the query: outside a 3-key window
    assert theirs[1][:, beyond].abs().max() == 0 and res.attentions[1][:, beyond].abs().max() == 0  # layer 1 slides
    assert theirs[0][:, beyond].amax() > 0.01  # layer 0 is full causal attention
    assert (res.attentions - theirs).abs().max() <= ATOL_ATTENTION


def test_mistral_window_is_built_in_and_combines_with_a_user_mask(decoders):
    model, _ = decoders["mistral"]
    res = model.run(TEXTS[0])
    n = len(res.tokens)
    assert n > 10
    allowed = causal_mask(n) & window_mask(n, 4)  # 5 keys: itself and the 4 before
    assert torch.equal(res.mask, allowed)
    assert (res.attentions[..., ~allowed] == 0).all()
    narrower = model.run(TEXTS[0], mask="window:1")
    assert torch.equal(narrower.mask, causal_mask(n) & window_mask(n, 1))
    assert (narrower.attentions[..., ~narrower.mask] == 0).all()


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_mask_and_scale_dials_act_inside_every_layer(decoders, name):
    model, _ = decoders[name]
    base = model.run(TEXTS[0])
    assert torch.equal(base.mask, causal_mask(len(base.tokens)))
    windowed = model.run(TEXTS[0], mask="window:2")
    assert (windowed.attentions[..., ~windowed.mask] == 0).all()
    assert torch.allclose(windowed.attentions.sum(-1), torch.ones(windowed.attentions.shape[:-1]), atol=1e-5)
    unscaled = model.run(TEXTS[0], scale=False)
    assert unscaled.scale == 1.0 and base.scale == pytest.approx(model.d_head**-0.5)
    assert (unscaled.attentions - base.attentions).abs().max() > 1e-2
    assert (windowed.attentions[1] - base.attentions[1]).abs().max() > 1e-2  # the later layer changes too


def test_kept_trace_holds_rotated_queries_and_repeated_keys(decoders):
    model, _ = decoders["llama"]  # 4 query heads over 2 K/V heads
    res = model.run(TEXTS[1], keep=True)
    n = len(res.tokens)
    t = res.traces[1]
    assert t.q.shape == t.k.shape == t.v.shape == (1, 4, n, 16)
    assert t.k_cached.shape == t.v_cached.shape == t.k_before_rope.shape == (1, 2, n, 16)
    assert torch.equal(t.k[:, 0], t.k[:, 1]) and torch.equal(t.k[:, 2], t.k_cached[:, 1])  # heads 0, 1 share K/V head 0
    cos, sin = rope_angles(torch.arange(n), model.cfg.inv_freq.cpu())
    torch.testing.assert_close(apply_rope(t.q_before_rope, cos, sin), t.q, atol=1e-6, rtol=0)
    weights = torch.softmax((t.scores * t.scale).masked_fill(~t.mask, float("-inf")), dim=-1)
    torch.testing.assert_close(weights[0], res.attentions[1], atol=1e-6, rtol=0)


def test_per_head_weights_repeat_kv_heads_for_query_heads(decoders):
    model, _ = decoders["llama"]
    w = model.per_head_weights(0)
    assert w["W_Q"].shape == (4, 32, 16) and w["W_O"].shape == (4, 16, 32)
    assert w["W_K"].shape == (4, 32, 16) and w["W_K_kv"].shape == (2, 32, 16)
    assert torch.equal(w["W_K"][3], w["W_K_kv"][1]) and torch.equal(w["W_V"][0], w["W_V_kv"][0])


@pytest.mark.parametrize("name", ["llama", "qwen2", "mistral"])
def test_truth_check_works_for_the_family(decoders, name):
    check = check_against_transformers(decoders[name][0], TEXTS[0])
    assert check.max_abs_diff is not None and check.matches
    # the explorer hands in its own run with the sidebar's "none" mask: for a decoder that is the causal default
    model = decoders[name][0]
    given = check_against_transformers(model, TEXTS[0], ours=model.run(TEXTS[0], mask="none"))
    assert given.max_abs_diff == check.max_abs_diff
    # and the run handed in is the one compared: an unscaled run differs from transformers
    assert not check_against_transformers(model, TEXTS[0], ours=model.run(TEXTS[0], scale=False)).matches


def test_run_batch_real_rows_equal_single_runs(decoders):
    model, _ = decoders["qwen2"]
    encs, ours = model.run_batch(["Short one.", TEXTS[0]])
    single = model.run("Short one.").attentions
    n = single.shape[-1]
    assert encs[0].n_pad > 0
    assert (ours[0, :, :, :n, :n] - single).abs().max() <= ATOL_ATTENTION


def test_existing_families_have_as_many_kv_heads_as_heads(bundled_model):
    assert bundled_model.n_kv_heads == bundled_model.n_heads == 12


@pytest.mark.parametrize("rope, message", [
    ({"rope_type": "banana", "rope_theta": 10000.0}, "Unknown RoPE type 'banana'"),
    ({"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0}, "does not implement"),
    ({"rope_type": "linear", "rope_theta": 10000.0}, "lack 'factor'"),
])
def test_unsupported_rope_types_are_clear_errors(tiny_decoder_folder, tmp_path, rope, message):
    source = tiny_decoder_folder("llama")
    for f in source.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "rope_parameters": rope}))
    with pytest.raises(AttnvizError, match=message):
        attnviz.load_model(str(tmp_path))


def test_uneven_gqa_groups_are_a_clear_error(tiny_decoder_folder, tmp_path):
    source = tiny_decoder_folder("llama")
    for f in source.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 3}))
    with pytest.raises(AttnvizError, match="shared evenly"):
        attnviz.load_model(str(tmp_path))
