"""The encoder layer recomputed from its weights equals the stack's own trace, post-LN and pre-LN."""

from dataclasses import replace

import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError
from attnviz.lessons.encoder_layer.latex import layer_norm_numbers, stage_latex, trace_check, vector_numbers
from attnviz.lessons.encoder_layer.norms import stream_norms
from attnviz.lessons.encoder_layer.steps import PAPER_SIZES, layer_norm_parts, layer_order, layer_steps, model_sizes

TEXT = "The cat sat on the mat because it was tired."
POST_KEYS = ["x", "attn", "r1", "ln1", "ff1", "act", "ff2", "r2", "ln2"]
PRE_KEYS = ["x", "ln1", "attn", "r1", "ln2", "ff1", "act", "ff2", "r2"]


def assert_equals_trace(model, res):
    for layer, trace in enumerate(res.traces):
        steps = layer_steps(model, res, layer)
        torch.testing.assert_close(steps.attn, trace.attn_out[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(steps.x_mid, trace.x_mid[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(steps.x_out, trace.x_out[0], rtol=1e-5, atol=1e-5)
        assert max(steps.trace_gaps.values()) < 1e-4
        if layer + 1 < len(res.traces):  # the next layer reads exactly what this one wrote
            torch.testing.assert_close(steps.x_out, res.traces[layer + 1].x_in[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask", [None, "causal"])
def test_post_ln_minilm_recomputed_equals_the_trace(minilm, mask):
    res = minilm.run(TEXT, mask=mask, keep=True)
    assert layer_order(minilm) == "post-LN"
    assert_equals_trace(minilm, res)
    steps = layer_steps(minilm, res, 0)
    assert [s.key for s in steps.stages] == POST_KEYS
    assert steps.stage("ff1").value.shape == (len(res.tokens), 1536)
    assert steps.stage("ln2").value is steps.x_out


def test_post_ln_toy_recomputed_equals_the_trace(toy):
    res = toy.run(TEXT, mask="window:2", scale=False, keep=True)
    assert_equals_trace(toy, res)


def test_pre_ln_gpt2_recomputed_equals_the_trace(tiny_model_folder):
    model = attnviz.load_model(str(tiny_model_folder("gpt2")))
    assert model.family == "gpt2" and layer_order(model) == "pre-LN"
    res = model.run("The cat sat on the mat.", keep=True)
    assert_equals_trace(model, res)
    steps = layer_steps(model, res, 1)
    assert [s.key for s in steps.stages] == PRE_KEYS
    # pre-LN: the stream itself is never normalised, x_out = x + MHA(LN(x)) + FFN(LN(x_mid))
    torch.testing.assert_close(steps.x_out, steps.x_in + steps.attn + steps.ffn, rtol=1e-5, atol=1e-5)


def test_post_ln_bart_encoder_recomputed_equals_the_trace(tiny_model_folder):
    model = attnviz.load_model(str(tiny_model_folder("bart")))
    assert model.family == "bart" and layer_order(model) == "post-LN"  # model.run(text) runs BART's encoder
    assert_equals_trace(model, model.run("The cat sat on the mat.", keep=True))


def test_layer_norm_parts_equal_torchs_layer_norm_and_report_mean_and_sigma():
    u = torch.randn(5, 16, generator=torch.Generator().manual_seed(0)) * 3 + 1
    gamma, beta = torch.rand(16) + 0.5, torch.randn(16)
    out, mu, sigma = layer_norm_parts(u, gamma, beta, 1e-5)
    torch.testing.assert_close(out, torch.nn.functional.layer_norm(u, (16,), gamma, beta, 1e-5), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mu, u.mean(dim=1))
    torch.testing.assert_close(sigma, (u.var(dim=1, unbiased=False) + 1e-5).sqrt())


def test_the_order_is_read_from_the_config_and_a_layer_it_does_not_cover_is_said_not_guessed():
    model = attnviz.load_model("toy")
    model.family = "mamba"  # the family's name plays no part: the config's fields decide
    assert layer_order(model) == "post-LN"
    model.cfg = replace(model.cfg, pre_ln=True)
    assert layer_order(model) == "pre-LN"
    model.cfg = replace(model.cfg, norm="rms")  # RMSNorm with an FFN and no RoPE: neither recomputation
    with pytest.raises(AttnvizError, match="norm 'rms', pre_ln = True, mlp 'ffn'.*does not guess"):
        layer_order(model)
    with pytest.raises(AttnvizError, match="does not guess"):
        layer_steps(model, attnviz.load_model("toy").run(TEXT, keep=True), 0)


def test_bad_layer_or_an_unkept_run_is_a_clear_error(toy):
    with pytest.raises(AttnvizError, match="layers 0 to 1"):
        layer_steps(toy, toy.run(TEXT, keep=True), 2)
    with pytest.raises(AttnvizError, match="keep=True"):
        layer_steps(toy, toy.run(TEXT), 0)


def test_stream_norms_over_layers(minilm):
    res = minilm.run(TEXT, keep=True)
    norms = stream_norms(minilm, res)
    assert norms.x_in.shape == norms.attn_update.shape == norms.ffn_update.shape == norms.relative_change.shape == (6,)
    for layer, trace in enumerate(res.traces):
        assert float(norms.x_in[layer]) == pytest.approx(float(trace.x_in[0].norm(dim=-1).mean()), rel=1e-5)
        assert float(norms.attn_update[layer]) == pytest.approx(float(trace.attn_out[0].norm(dim=-1).mean()), rel=1e-4)
        change = (trace.x_out[0] - trace.x_in[0]).norm(dim=-1) / trace.x_in[0].norm(dim=-1)
        assert float(norms.relative_change[layer]) == pytest.approx(float(change.mean()), rel=1e-4)
    assert norms.x_out_last == pytest.approx(float(res.traces[-1].x_out[0].norm(dim=-1).mean()), rel=1e-5)


def test_sizes_beside_the_papers(minilm):
    assert model_sizes(minilm) == type(PAPER_SIZES)(d_model=384, d_ff=1536, n_layers=6, n_heads=12, d_head=32)
    assert (PAPER_SIZES.d_model, PAPER_SIZES.d_ff, PAPER_SIZES.n_layers, PAPER_SIZES.n_heads) == (512, 2048, 6, 8)


def test_latex_writes_the_tokens_numbers(toy):
    res = toy.run(TEXT, keep=True)
    steps = layer_steps(toy, res, 0)
    stage = steps.stage("ln1")
    latex = stage_latex(stage, 3)
    assert r"x^{\text{mid}}_{3}" in latex and r"\mathbb{R}^{8}" in latex and r"\dots" not in latex  # all 8 written
    assert vector_numbers(torch.arange(20.0)).count(",") == 6  # five numbers, then … and the norm
    mu, sigma = steps.ln["ln1"]
    assert f"= {float(mu[3]):.4f}".rstrip("0") in layer_norm_numbers(steps, "ln1", 3)
    assert "x^{\\text{out}}: " in trace_check(steps.trace_gaps)
