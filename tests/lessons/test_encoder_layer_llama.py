"""The Llama-family decoder block (RMSNorm, RoPE, GQA, SwiGLU) recomputed from its weights equals the model's trace."""

import pytest
import torch
from test_encoder_layer import assert_equals_trace

import attnviz
from attnviz.lessons.encoder_layer.latex import layer_norm_numbers, stage_latex
from attnviz.lessons.encoder_layer.llama_block import rms_norm_parts, rope_block_attention
from attnviz.lessons.encoder_layer.norms import stream_norms
from attnviz.lessons.encoder_layer.steps import layer_order, layer_steps, model_sizes

TEXT = "the cat sat on the mat and the dog sat too"
KEYS = ["x", "ln1", "attn", "r1", "ln2", "gate", "up", "act", "ff2", "r2"]


@pytest.fixture(scope="module", params=["llama", "qwen2", "mistral"])
def decoder(request, tiny_decoder_folder):
    return attnviz.load_model(str(tiny_decoder_folder(request.param)))


def test_block_recomputed_from_weights_equals_the_models_trace(decoder):
    res = decoder.run(TEXT, keep=True)
    assert layer_order(decoder) == "pre-RMSNorm"
    assert_equals_trace(decoder, res)
    steps = layer_steps(decoder, res, 1)
    assert [s.key for s in steps.stages] == KEYS
    n = len(res.tokens)
    assert steps.stage("gate").value.shape == (n, decoder.cfg.d_ff)
    torch.testing.assert_close(steps.stage("act").value,
                               torch.nn.functional.silu(steps.stage("gate").value) * steps.stage("up").value)
    assert steps.stage("r2").value is steps.x_out
    assert model_sizes(decoder).d_ff == decoder.cfg.d_ff


def test_rope_matters_without_it_the_attention_differs(decoder):
    """The attention stage really uses the rotation: with all frequencies 0 (no rotation) it no longer matches."""
    res = decoder.run(TEXT, keep=True)
    trace = res.traces[0]
    lw, cfg = decoder.layers[0].to(torch.device("cpu")), decoder.cfg  # the trace is on the CPU; on a GPU the weights are not
    u, _ = rms_norm_parts(trace.x_in[0], lw.ln1_w, cfg.ln_eps)
    inv_freq = decoder.inv_freq.cpu()
    rotated = rope_block_attention(u, lw, cfg, inv_freq, trace.mask, trace.scale)
    unrotated = rope_block_attention(u, lw, cfg, torch.zeros_like(inv_freq), trace.mask, trace.scale)
    torch.testing.assert_close(rotated, trace.attn_out[0], rtol=1e-5, atol=1e-5)
    assert (unrotated - trace.attn_out[0]).abs().max() > 1e-3


def test_rms_norm_numbers_and_latex(tiny_decoder_folder):
    model = attnviz.load_model(str(tiny_decoder_folder("llama")))
    res = model.run(TEXT, keep=True)
    steps = layer_steps(model, res, 0)
    x = steps.x_in
    rms = (x.pow(2).mean(-1) + model.cfg.ln_eps).sqrt()
    torch.testing.assert_close(steps.ln["ln1"][1], rms)
    assert steps.ln["ln1"][0] is None
    torch.testing.assert_close(steps.stage("ln1").value, x / rms[:, None] * model.layers[0].ln1_w.cpu())
    tex = layer_norm_numbers(steps, "ln1", 3)
    assert r"\mathrm{rms}_{3}" in tex and f"{float(rms[3]):.4g}"[:5] in tex
    ln = stage_latex(steps.stage("ln1"), 3)
    assert r"\mathrm{RMSNorm}_1(x)_{3}" in ln and r"\odot g_1" in ln
    act = stage_latex(steps.stage("act"), 3)
    assert r"\mathrm{silu}(a_{3}) \odot b_{3}" in act
    norms = stream_norms(model, res)
    assert norms.x_in.shape == (model.n_layers,)
    assert torch.isfinite(norms.relative_change).all()
