"""Multi-head attention, head by head: split/merge, per-head weights, and Concat(heads)·W_O = Σ_h head_h·W_Oʰ."""

import pytest
import torch

from attnviz.engine.attention import merge_heads, per_head_output_projections, split_heads

ATOL = 1e-5
TEXT = "The cat sat on the mat because it was warm."


@pytest.fixture(scope="module")
def kept_run(bundled_model):
    return bundled_model.run(TEXT, keep=True)


def test_split_then_merge_heads_is_the_identity():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    assert torch.equal(heads[:, 1], x[..., 4:8])  # head h sees features h·hs .. (h+1)·hs
    assert torch.equal(merge_heads(heads), x)


def test_keep_returns_one_trace_per_layer_with_per_head_shapes(bundled_model, kept_run):
    n = len(kept_run.tokens)
    assert len(kept_run.traces) == bundled_model.n_layers
    t = kept_run.traces[0]
    assert t.q.shape == (1, 12, n, 32) and t.weights.shape == (1, 12, n, n)
    assert t.head_outputs.shape == (1, 12, n, 32) and t.attn_out.shape == (1, n, 384)


def test_trace_weights_are_the_returned_attentions(kept_run):
    for layer, t in enumerate(kept_run.traces):
        assert torch.equal(t.weights[0], kept_run.attentions[layer])


@pytest.mark.parametrize("layer", [0, 3, 5])
def test_concat_times_w_o_equals_sum_of_per_head_projections(bundled_model, kept_run, layer):
    t = kept_run.traces[layer]
    W_O = bundled_model.per_head_weights(layer)["W_O"]  # (nh, hs, C)
    nh, hs, C = W_O.shape
    concat = merge_heads(t.head_outputs) @ W_O.reshape(nh * hs, C)  # Concat(head_1..head_nh) · W_O
    summed = per_head_output_projections(t.head_outputs, W_O.reshape(nh * hs, C)).sum(dim=1)
    by_hand = sum(t.head_outputs[:, h] @ W_O[h] for h in range(nh))  # Σ_h head_h · W_Oʰ
    torch.testing.assert_close(summed, concat, atol=ATOL, rtol=0)
    torch.testing.assert_close(by_hand, concat, atol=ATOL, rtol=0)


@pytest.mark.parametrize("layer", [0, 3, 5])
def test_sum_of_per_head_projections_is_attn_out_minus_bias(bundled_model, kept_run, layer):
    t = kept_run.traces[layer]
    W_O = bundled_model.per_head_weights(layer)["W_O"]
    b_O = bundled_model.layers[layer].b_o.cpu()
    nh, hs, C = W_O.shape
    summed = per_head_output_projections(t.head_outputs, W_O.reshape(nh * hs, C)).sum(dim=1)
    torch.testing.assert_close(summed, t.attn_out - b_O, atol=ATOL, rtol=0)


@pytest.mark.parametrize("layer", [0, 5])
def test_per_head_w_q_k_v_reproduce_the_traced_q_k_v(bundled_model, kept_run, layer):
    # In a post-LN encoder the attention reads x_in directly: q_h = x W_Qʰ + b_Qʰ for every head.
    t = kept_run.traces[layer]
    w = bundled_model.per_head_weights(layer)
    b_q, b_k, b_v = bundled_model.layers[layer].b_qkv.cpu().view(3, bundled_model.n_heads, -1)
    x = t.x_in[0]  # (T, C)
    for h in range(bundled_model.n_heads):
        torch.testing.assert_close(x @ w["W_Q"][h] + b_q[h], t.q[0, h], atol=ATOL, rtol=0)
        torch.testing.assert_close(x @ w["W_K"][h] + b_k[h], t.k[0, h], atol=ATOL, rtol=0)
        torch.testing.assert_close(x @ w["W_V"][h] + b_v[h], t.v[0, h], atol=ATOL, rtol=0)


def test_trace_scores_are_the_scores_the_weights_came_from(bundled_model):
    # scores are recomputed from q and k on request: they must be the very ones softmaxed in the layer.
    res = bundled_model.run(TEXT, mask="causal", keep=True)
    for t in res.traces:
        assert t.mask.dtype == torch.bool  # kept as a mask, not turned into 0.0/1.0 floats
        assert t.scores.shape == t.weights.shape
        torch.testing.assert_close(t.scores, t.q @ t.k.transpose(-2, -1), atol=0, rtol=0)
        masked = (t.scores * t.scale).masked_fill(~t.mask, float("-inf"))
        torch.testing.assert_close(torch.softmax(masked, dim=-1), t.weights, atol=1e-6, rtol=0)


def test_head_outputs_are_weights_times_values(kept_run):
    t = kept_run.traces[2]
    torch.testing.assert_close(t.head_outputs, t.weights @ t.v, atol=ATOL, rtol=0)


def test_layers_chain_through_the_residual_stream(kept_run):
    for before, after in zip(kept_run.traces[:-1], kept_run.traces[1:], strict=True):
        assert torch.equal(after.x_in, before.x_out)
    torch.testing.assert_close(kept_run.traces[-1].x_out[0], kept_run.hidden, atol=0, rtol=0)


def test_traces_come_back_float32_on_the_cpu(kept_run):
    t = kept_run.traces[0]
    for name in ("q", "k", "v", "scores", "weights", "head_outputs", "attn_out", "x_mid", "x_out"):
        tensor = getattr(t, name)
        assert tensor.device.type == "cpu" and tensor.dtype == torch.float32, name
