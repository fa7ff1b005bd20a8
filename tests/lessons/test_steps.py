"""attnviz.lessons.step_by_step.steps: one head's intermediates agree with the model's own computation, step by step."""

import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError
from attnviz.lessons.step_by_step.steps import head_steps, output_projection_gap, pair_detail

TEXT = "The cat sat on the mat."
ATOL = 1e-5


@pytest.fixture(scope="module")
def toy():
    return attnviz.load_model("toy")


def qkv_from_x(model, steps, layer: int):
    """Q, K, V recomputed from X with the per-head weights and the biases (hs-sized slices of b_qkv)."""
    C, hs, h = model.d_model, model.d_head, steps.head
    b_q, b_k, b_v = model.layers[layer].b_qkv.cpu().split(C)  # each (C,)
    head_slice = slice(h * hs, (h + 1) * hs)
    return (steps.x @ steps.w_q + b_q[head_slice], steps.x @ steps.w_k + b_k[head_slice],
            steps.x @ steps.w_v + b_v[head_slice])


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 1)])
def test_toy_steps_rebuild_q_k_v_and_the_output(toy, layer, head):
    res = toy.run(TEXT, mask="causal", keep=True)
    s = head_steps(toy, res, layer, head)
    n = len(res.tokens)
    assert s.x.shape == (n, 8) and s.q.shape == (n, 4) and s.scores.shape == (n, n) and s.concat.shape == (n, 8)
    for mine, theirs in zip(qkv_from_x(toy, s, layer), (s.q, s.k, s.v), strict=True):
        torch.testing.assert_close(mine, theirs, atol=ATOL, rtol=0)
    torch.testing.assert_close(s.scores, s.q @ s.k.T, atol=ATOL, rtol=0)  # S = Q Kᵀ
    torch.testing.assert_close(s.weights, torch.softmax(s.masked_scores, dim=-1), atol=ATOL, rtol=0)
    torch.testing.assert_close(s.head_out, s.weights @ s.v, atol=ATOL, rtol=0)  # head = A V
    torch.testing.assert_close(s.concat[:, head * 4:(head + 1) * 4], s.head_out)  # its own columns of Concat
    torch.testing.assert_close(s.concat @ s.w_o + s.b_o, s.attn_out, atol=ATOL, rtol=0)
    assert torch.equal(s.weights, res.attentions[layer, head])


def test_masked_scores_are_minus_infinity_exactly_where_the_mask_forbids(toy):
    s = head_steps(toy, toy.run(TEXT, mask="causal", keep=True), 0, 0)
    assert torch.equal(torch.isneginf(s.masked_scores), ~torch.ones_like(s.allowed).tril().bool())
    unmasked = head_steps(toy, toy.run(TEXT, keep=True), 0, 0)
    assert not unmasked.masked and unmasked.allowed.all()


def test_pre_ln_input_is_the_layernormed_residual(tiny_model_folder):
    gpt2 = attnviz.load_model(str(tiny_model_folder("gpt2")))
    res = gpt2.run(TEXT, keep=True)
    s = head_steps(gpt2, res, 1, 2)
    assert not torch.allclose(s.x, res.traces[1].x_in[0])  # not the raw residual stream ...
    for mine, theirs in zip(qkv_from_x(gpt2, s, 1), (s.q, s.k, s.v), strict=True):  # ... but what Q, K, V came from
        torch.testing.assert_close(mine, theirs, atol=ATOL, rtol=0)
    assert s.masked  # a decoder's causal mask is always on


def test_pair_detail_is_the_dot_product_its_scaled_value_and_the_weight(toy):
    s = head_steps(toy, toy.run(TEXT, mask="causal", keep=True), 1, 0)
    p = pair_detail(s, 4, 2)
    assert p.dot == pytest.approx(float(s.q[4] @ s.k[2]), abs=ATOL)
    assert p.scaled == pytest.approx(p.dot / 2, abs=ATOL)  # d_head 4: ÷ √4
    assert p.allowed and p.weight == pytest.approx(float(s.weights[4, 2]))
    later = pair_detail(s, 2, 4)
    assert not later.allowed and later.weight == 0.0 and torch.isneginf(later.row[4])


def test_concat_times_w_o_equals_the_sum_of_per_head_projections(toy):
    s = head_steps(toy, toy.run(TEXT, keep=True), 0, 1)
    via_concat, via_heads, gap = output_projection_gap(s, 3)
    assert via_concat.shape == (8,) and gap < 1e-5
    torch.testing.assert_close(via_concat + s.b_o, s.attn_out[3], atol=ATOL, rtol=0)


def test_out_of_range_choices_are_clear_errors(toy):
    res = toy.run(TEXT, keep=True)
    with pytest.raises(AttnvizError, match="Head 5"):
        head_steps(toy, res, 0, 5)
    with pytest.raises(AttnvizError, match="query index 40"):
        pair_detail(head_steps(toy, res, 0, 0), 40, 0)
    with pytest.raises(AttnvizError, match="keep=True"):
        head_steps(toy, toy.run(TEXT), 0, 0)
