"""The bare scaled dot-product attention: against PyTorch's SDPA, and its properties under hypothesis."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attnviz
from attnviz.engine.attention import masked_softmax, resolve_scale, scaled_dot_product_attention_trace
from attnviz.engine.masks import causal_mask

ATOL = 1e-5
PROPERTY = settings(max_examples=50, deadline=None)


def randn(*shape, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def random_mask(*shape, seed: int, keep: float = 0.5) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) < keep


def qkv(batch: tuple, n_q: int, n_k: int, d_k: int, d_v: int, seed: int):
    return randn(*batch, n_q, d_k, seed=seed), randn(*batch, n_k, d_k, seed=seed + 1), randn(*batch, n_k, d_v, seed=seed + 2)


# ---- against torch.nn.functional.scaled_dot_product_attention -------------------------------

SHAPES = [((), 5, 5, 8, 8), ((3,), 4, 7, 16, 8), ((2, 4), 6, 6, 8, 4), ((2, 3), 1, 9, 32, 16)]


@pytest.mark.parametrize("batch, n_q, n_k, d_k, d_v", SHAPES)
def test_matches_torch_sdpa_without_mask(batch, n_q, n_k, d_k, d_v):
    q, k, v = qkv(batch, n_q, n_k, d_k, d_v, seed=0)
    ours, _ = attnviz.scaled_dot_product_attention(q, k, v)
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)


@pytest.mark.parametrize("batch, n_q, n_k, d_k, d_v", SHAPES)
def test_matches_torch_sdpa_with_bool_mask(batch, n_q, n_k, d_k, d_v):
    q, k, v = qkv(batch, n_q, n_k, d_k, d_v, seed=1)
    mask = random_mask(*batch, n_q, n_k, seed=2)
    mask[..., 0] = True  # no fully masked rows: torch gives those NaN on some backends
    ours, _ = attnviz.scaled_dot_product_attention(q, k, v, mask=mask)
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)


@pytest.mark.parametrize("scale", [0.05, 0.5, 1.0, 2.0])
def test_matches_torch_sdpa_with_float_scale(scale):
    q, k, v = qkv((2, 3), 6, 6, 8, 8, seed=3)
    mask = causal_mask(6)
    ours, _ = attnviz.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)


def test_weights_match_an_explicit_masked_softmax():
    q, k, v = qkv((2,), 5, 6, 4, 4, seed=4)
    mask = random_mask(5, 6, seed=5)
    mask[:, 0] = True
    _, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=mask)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(4)).masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(weights, torch.softmax(scores, dim=-1), atol=ATOL, rtol=0)


def test_default_scale_is_one_over_sqrt_dk():
    assert resolve_scale(None, 64) == resolve_scale(True, 64) == 1 / 8
    assert resolve_scale(False, 64) == 1.0
    assert resolve_scale(0.25, 64) == 0.25


def test_trace_keeps_each_step():
    q, k, v = qkv((), 4, 4, 4, 4, seed=6)
    mask = causal_mask(4)
    t = scaled_dot_product_attention_trace(q, k, v, mask=mask)
    torch.testing.assert_close(t.scores, q @ k.T)
    torch.testing.assert_close(t.scaled_scores, q @ k.T / 2)
    assert torch.isneginf(t.masked_scores[~mask]).all()  # shown as -inf, as the app draws it
    torch.testing.assert_close(t.output, t.weights @ v)


# ---- properties --------------------------------------------------------------------------

dims = st.integers(1, 7)
batches = st.lists(st.integers(1, 3), max_size=2).map(tuple)
seeds = st.integers(0, 2**31 - 1)


@PROPERTY
@given(batch=batches, n_q=dims, n_k=dims, d=dims, seed=seeds, keep=st.floats(0.0, 1.0))
def test_weights_sum_to_one_over_allowed_keys_and_forbidden_are_zero(batch, n_q, n_k, d, seed, keep):
    q, k, v = qkv(batch, n_q, n_k, d, d, seed=seed)
    mask = random_mask(*batch, n_q, n_k, seed=seed + 3, keep=keep)
    out, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=mask)
    assert (weights[~mask] == 0).all()  # exactly zero, not merely small
    live = mask.any(-1)
    sums = weights.sum(-1)
    torch.testing.assert_close(sums[live], torch.ones_like(sums[live]), atol=1e-5, rtol=0)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()


@PROPERTY
@given(batch=batches, n_q=dims, n_k=dims, d=dims, seed=seeds, dead_row=st.integers(0, 6))
def test_fully_masked_rows_give_zero_weights_and_output_never_nan(batch, n_q, n_k, d, seed, dead_row):
    q, k, v = qkv(batch, n_q, n_k, d, d, seed=seed)
    mask = random_mask(*batch, n_q, n_k, seed=seed + 3)
    row = dead_row % n_q
    mask[..., row, :] = False
    out, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=mask)
    assert not torch.isnan(out).any() and not torch.isnan(weights).any()
    assert (weights[..., row, :] == 0).all()
    assert (out[..., row, :] == 0).all()


def test_an_all_false_mask_gives_all_zeros():
    q, k, v = qkv((2,), 3, 3, 4, 4, seed=7)
    out, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=torch.zeros(3, 3, dtype=torch.bool))
    assert (weights == 0).all() and (out == 0).all()


def test_masked_softmax_never_returns_nan_even_with_minus_inf_scores():
    scores = torch.tensor([[float("-inf"), float("-inf")], [0.0, float("-inf")]])
    weights = masked_softmax(scores, torch.tensor([[False, False], [True, False]]))
    assert torch.equal(weights, torch.tensor([[0.0, 0.0], [1.0, 0.0]]))


@PROPERTY
@given(batch=batches, n_q=dims, n_k=dims, d=dims, seed=seeds)
def test_scale_false_equals_scale_one(batch, n_q, n_k, d, seed):
    q, k, v = qkv(batch, n_q, n_k, d, d, seed=seed)
    out_false, w_false = attnviz.scaled_dot_product_attention(q, k, v, scale=False)
    out_one, w_one = attnviz.scaled_dot_product_attention(q, k, v, scale=1.0)
    assert torch.equal(w_false, w_one) and torch.equal(out_false, out_one)


@PROPERTY
@given(batch=batches, n=dims, d=dims, seed=seeds)
def test_causal_mask_gives_exact_zeros_above_the_diagonal(batch, n, d, seed):
    q, k, v = qkv(batch, n, n, d, d, seed=seed)
    _, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=causal_mask(n))
    assert (weights.triu(diagonal=1) == 0).all()
    assert (weights[..., 0, 0] == 1).all()  # the first token can only look at itself


@PROPERTY
@given(n=st.integers(1, 8), d=dims, seed=seeds, data=st.data())
def test_permuting_qkv_rows_together_permutes_outputs(n, d, seed, data):
    q, k, v = qkv((2,), n, n, d, d, seed=seed)
    perm = torch.tensor(data.draw(st.permutations(range(n))), dtype=torch.long)
    out, weights = attnviz.scaled_dot_product_attention(q, k, v)
    out_p, weights_p = attnviz.scaled_dot_product_attention(q[:, perm], k[:, perm], v[:, perm])
    torch.testing.assert_close(out_p, out[:, perm], atol=ATOL, rtol=0)
    torch.testing.assert_close(weights_p, weights[:, perm][:, :, perm], atol=ATOL, rtol=0)


# ---- without positions the whole model is permutation-equivariant ---------------------------

WORDS = ["cat", "dog", "sat", "ran", "on", "the", "mat", "quickly", "big", "red"]


@pytest.fixture(scope="module")
def toy_without_positions():
    return attnviz.load_model("toy", positions=False)


@PROPERTY
@given(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=8), data=st.data())
def test_toy_without_positions_is_permutation_equivariant(toy_without_positions, words, data):
    order = data.draw(st.permutations(range(len(words))))
    res = toy_without_positions.run(" ".join(words))
    res_p = toy_without_positions.run(" ".join(words[i] for i in order))
    # [CLS] stays first and [SEP] last; only the words in between move. Token t'_i = t_P[i].
    n = len(res.tokens)
    P = torch.tensor([0] + [1 + i for i in order] + [n - 1])
    assert res_p.tokens == [res.tokens[i] for i in P]
    torch.testing.assert_close(res_p.hidden, res.hidden[P], atol=ATOL, rtol=0)
    torch.testing.assert_close(res_p.attentions, res.attentions[..., P, :][..., P], atol=ATOL, rtol=0)


def test_toy_with_positions_is_not_permutation_equivariant():
    # The control for the property above: positions are what break the symmetry.
    model = attnviz.load_model("toy", positions=True)
    res, res_p = model.run("cat sat mat"), model.run("mat sat cat")
    P = torch.tensor([0, 3, 2, 1, 4])
    assert not torch.allclose(res_p.hidden, res.hidden[P], atol=1e-3)
