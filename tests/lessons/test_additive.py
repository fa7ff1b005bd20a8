"""Additive (Bahdanau) attention, the learn-to-agree fit, and the cost measurement."""

import math
from types import SimpleNamespace

import pytest
import torch

from attnviz.engine.masks import causal_mask
from attnviz.errors import AttnvizError
from attnviz.lessons.additive import cost as ct
from attnviz.lessons.additive import figures as af
from attnviz.lessons.additive import scoring as sc


def test_shapes_and_rows_that_sum_to_1():
    q, k, v = sc.random_qkv(5, 6, seed=0)
    k, v = k[:4], torch.randn(4, 3)
    w = sc.seeded_additive_weights(6, 6, 7)
    assert sc.additive_hidden(q, k, w).shape == (5, 4, 7)  # the (n_q, n_k, d_a) tensor
    assert sc.additive_scores(q, k, w).shape == (5, 4)
    out, weights = sc.additive_attention(q, k, v, w)
    assert out.shape == (5, 3) and weights.shape == (5, 4)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5))
    batched = sc.additive_scores(torch.stack([q, q]), torch.stack([k, k]), w)  # (2, 5, 4)
    torch.testing.assert_close(batched[1], sc.additive_scores(q, k, w))


def test_equals_a_hand_computation_for_a_tiny_case():
    q = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    k = torch.tensor([[0.5, -1.0], [1.0, 1.0]])
    v = torch.tensor([[1.0], [3.0]])
    w = sc.AdditiveWeights(W=torch.tensor([[1.0, 0.0], [0.0, 1.0]]), U=torch.tensor([[0.0, 1.0], [1.0, 0.0]]),
                           v=torch.tensor([2.0, -1.0]), how="by hand")
    e = [[0.0, 0.0], [0.0, 0.0]]
    for i in range(2):
        for j in range(2):
            h0 = math.tanh(q[i, 0].item() + k[j, 1].item())  # (W q_i + U k_j)_0 = q_i0 + k_j1
            h1 = math.tanh(q[i, 1].item() + k[j, 0].item())  # (W q_i + U k_j)_1 = q_i1 + k_j0
            e[i][j] = 2.0 * h0 - 1.0 * h1
    torch.testing.assert_close(sc.additive_scores(q, k, w), torch.tensor(e), atol=1e-6, rtol=0)
    out, weights = sc.additive_attention(q, k, v, w)
    for i in range(2):
        z = math.exp(e[i][0]) + math.exp(e[i][1])
        a0, a1 = math.exp(e[i][0]) / z, math.exp(e[i][1]) / z
        assert weights[i].tolist() == pytest.approx([a0, a1], abs=1e-6)
        assert out[i, 0].item() == pytest.approx(a0 * 1.0 + a1 * 3.0, abs=1e-6)


def test_masks_are_honoured_and_a_fully_masked_row_gives_zeros():
    q, k, v = sc.random_qkv(4, 3, seed=1)
    w = sc.seeded_additive_weights(3, 3, 5)
    _, weights = sc.additive_attention(q, k, v, w, causal_mask(4))
    assert torch.all(weights.triu(1) == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))
    mask = causal_mask(4).clone()
    mask[2] = False
    out, weights = sc.additive_attention(q, k, v, w, mask)
    assert torch.all(weights[2] == 0) and torch.all(out[2] == 0) and not torch.isnan(weights).any()
    with pytest.raises(AttnvizError):
        sc.additive_attention(q, k, v, w, torch.ones(3, 3, dtype=torch.bool))


def test_dot_product_side_is_softmax_of_scaled_scores():
    q, k, v = sc.random_qkv(6, 16, seed=2)
    out, weights = sc.dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.T / 4.0, dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, expected @ v)


def test_learning_to_agree_reduces_the_loss_and_the_difference():
    q, k, v = sc.random_qkv(8, 16, seed=0)
    fit = sc.fit_additive_to_dot_product(q, k, d_a=16, steps=150, seed=0)
    assert len(fit.losses) == 151 and fit.losses[-1] < 0.05 * fit.losses[0]
    _, target = sc.dot_product_attention(q, k, v)
    _, fixed = sc.additive_attention(q, k, v, sc.seeded_additive_weights(16, 16, 16, 0))
    _, fitted = sc.additive_attention(q, k, v, fit.weights)
    assert (fitted - target).abs().max() < 0.2 * (fixed - target).abs().max()
    assert fit.weights.how.startswith("fitted")


def test_the_fit_respects_a_mask():
    q, k, _ = sc.random_qkv(6, 8, seed=3)
    fit = sc.fit_additive_to_dot_product(q, k, d_a=8, steps=60, mask=causal_mask(6))
    assert all(math.isfinite(x) for x in fit.losses) and fit.losses[-1] < fit.losses[0]


def test_head_queries_keys_reproduce_the_models_pattern(toy):
    res = toy.run("the cat sat on the mat", keep=True)
    q, k, v = sc.head_queries_keys(res, 1, 1)
    _, weights = sc.dot_product_attention(q, k, v)
    torch.testing.assert_close(weights, res.attentions[1, 1], atol=1e-6, rtol=0)
    with pytest.raises(AttnvizError):
        sc.head_queries_keys(res, 2, 0)
    with pytest.raises(AttnvizError):
        sc.head_queries_keys(toy.run("the cat"), 0, 0)


@pytest.mark.parametrize("call", [
    lambda: sc.random_qkv(0, 4), lambda: sc.random_qkv(sc.MAX_N + 1, 4), lambda: sc.random_qkv(4, 0),
    lambda: sc.random_qkv(4, sc.MAX_D + 1), lambda: sc.random_qkv(True, 4),
    lambda: sc.seeded_additive_weights(4, 4, 0), lambda: sc.seeded_additive_weights(4, 4, sc.MAX_D_A + 1),
    lambda: sc.fit_additive_to_dot_product(torch.ones(2, 4), torch.ones(2, 4), 4, steps=0),
    lambda: sc.additive_scores(torch.ones(2, 4), torch.ones(2, 5), sc.seeded_additive_weights(4, 4, 3)),
    lambda: ct.measure_cost((8, ct.MAX_COST_N + 1)), lambda: ct.measure_cost(()),
])
def test_bad_inputs_are_clear_errors(call):
    with pytest.raises(AttnvizError):
        call()


def test_cost_measurement_reports_time_and_the_materialised_sizes():
    threads = torch.get_num_threads()
    cost = ct.measure_cost((4, 16), d=8, d_a=6, repeats=1)
    assert torch.get_num_threads() == threads  # one_thread() gave the threads back
    assert cost.ns == [4, 16] and all(t > 0 for t in cost.additive_seconds + cost.dot_seconds)
    q, k = torch.randn(16, 8), torch.randn(16, 8)
    hidden = sc.additive_hidden(q, k, sc.seeded_additive_weights(8, 8, 6))
    assert cost.additive_bytes[1] == hidden.numel() * hidden.element_size() == 16 * 16 * 6 * 4
    assert cost.dot_bytes[1] == (q @ k.T).numel() * 4
    fig = af.cost_figure(cost)
    assert len(fig.data) == 4 and fig.layout.xaxis.type == "log" and fig.layout.yaxis2.type == "log"
    assert list(fig.data[1].y) == pytest.approx([b / 2**20 for b in cost.additive_bytes])


def test_latex_carries_the_numbers():
    assert r"\mathbb{R}^{16\times8}" in af.additive_latex(8, 16)
    assert "d_k = 64" in af.dot_latex(64) and "0.125" in af.dot_latex(64)
    assert "0.1473" in af.entry_latex(0, 1, -0.659, 0.3033, 0.1473, 0.0964)


def test_compare_scorings_holds_both_sides():
    q, k, v = sc.random_qkv(5, 8, seed=4)
    w = sc.seeded_additive_weights(8, 8, 6, 1)
    both = sc.compare_scorings(q, k, v, w, causal_mask(5))
    torch.testing.assert_close(both.additive_scores, sc.additive_scores(q, k, w))
    torch.testing.assert_close(both.dot_scores, q @ k.T / math.sqrt(8))
    torch.testing.assert_close(both.additive_weights, sc.additive_attention(q, k, v, w, causal_mask(5))[1])
    torch.testing.assert_close(both.dot_weights, sc.dot_product_attention(q, k, v, causal_mask(5))[1])
    torch.testing.assert_close(both.difference, (both.additive_weights - both.dot_weights).abs())
    assert torch.all(both.difference.triu(1) == 0)  # masked keys have weight 0 on both sides


def test_grouped_query_heads_read_their_shared_key_value_head():
    q = torch.randn(1, 4, 3, 2)  # 4 query heads
    k = torch.randn(1, 2, 3, 2)  # 2 K/V heads: query heads 0, 1 share K/V head 0; 2, 3 share head 1
    res = SimpleNamespace(traces=[SimpleNamespace(q=q, k=k, v=k + 1)])
    for head, kv in [(0, 0), (1, 0), (2, 1), (3, 1)]:
        q_h, k_h, v_h = sc.head_queries_keys(res, 0, head)
        assert torch.equal(q_h, q[0, head]) and torch.equal(k_h, k[0, kv]) and torch.equal(v_h, k[0, kv] + 1)
