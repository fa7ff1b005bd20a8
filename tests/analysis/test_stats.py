"""Known answers for the pattern statistics, and no NaN from fully masked (all-zero) rows."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attnviz
from attnviz.analysis.stats import (
    KL_EPSILON,
    head_entropy,
    head_max_weight,
    head_statistics,
    infinite_rows,
    live_rows,
    mean_attention_distance,
    previous_token_share,
    row_kl_divergence,
    self_share,
    share_to_positions,
)
from attnviz.engine.attention import masked_softmax
from attnviz.errors import AttnvizError

N = 5


def uniform(n: int = N) -> torch.Tensor:
    return torch.full((n, n), 1.0 / n)


def previous_token(n: int = N) -> torch.Tensor:
    """Row 0 looks at itself (nothing before it), row i at i - 1."""
    p = torch.zeros(n, n)
    p[0, 0] = 1.0
    p[torch.arange(1, n), torch.arange(n - 1)] = 1.0
    return p


def first_token(n: int = N) -> torch.Tensor:
    p = torch.zeros(n, n)
    p[:, 0] = 1.0
    return p


def with_dead_row(p: torch.Tensor, row: int) -> torch.Tensor:
    """The same pattern with one query fully masked (all zeros), as masked_softmax returns it."""
    p = p.clone()
    p[row] = 0.0
    return p


# ---- entropy and max weight (existing functions, known answers) ---------------------------------


def test_uniform_rows_have_entropy_log_n_and_max_one_over_n():
    assert head_entropy(uniform()).item() == pytest.approx(math.log(N), abs=1e-6)
    assert head_max_weight(uniform()).item() == pytest.approx(1.0 / N, abs=1e-6)


def test_one_hot_rows_have_entropy_zero_and_max_one():
    assert head_entropy(torch.eye(N)).item() == pytest.approx(0.0, abs=1e-7)
    assert head_max_weight(torch.eye(N)).item() == pytest.approx(1.0)


# ---- mean attention distance -----------------------------------------------------------------


def test_identity_has_mean_distance_zero():
    assert mean_attention_distance(torch.eye(N)).item() == 0.0


def test_previous_token_pattern_distance_is_one_except_row_zero():
    assert mean_attention_distance(previous_token()).item() == pytest.approx((N - 1) / N)


def test_first_token_pattern_distance_is_mean_position():
    # row i puts all weight on key 0, distance i: mean over rows = (n - 1) / 2
    assert mean_attention_distance(first_token()).item() == pytest.approx((N - 1) / 2)


def test_uniform_mean_distance_closed_form():
    # Σ_i Σ_j |i - j| / n² = (n² - 1) / (3n)
    for n in (2, 5, 9):
        assert mean_attention_distance(uniform(n)).item() == pytest.approx((n * n - 1) / (3 * n), rel=1e-6)


def test_mean_distance_is_per_head():
    heads = torch.stack([torch.eye(N), first_token()])  # (2, n, n)
    assert mean_attention_distance(heads).tolist() == pytest.approx([0.0, (N - 1) / 2])


# ---- shares: self, previous, sinks ------------------------------------------------------------


def test_identity_self_share_one_previous_zero():
    assert self_share(torch.eye(N)).item() == pytest.approx(1.0)
    assert previous_token_share(torch.eye(N)).item() == pytest.approx(0.0)


def test_previous_token_pattern_previous_share_one():
    assert previous_token_share(previous_token()).item() == pytest.approx(1.0)
    assert self_share(previous_token()).item() == pytest.approx(1.0 / N)  # only row 0 looks at itself


def test_uniform_shares():
    assert self_share(uniform()).item() == pytest.approx(1.0 / N)
    assert previous_token_share(uniform()).item() == pytest.approx(1.0 / N)
    assert share_to_positions(uniform(), [0, N - 1]).item() == pytest.approx(2.0 / N)


def test_share_to_positions_counts_each_position_once():
    assert share_to_positions(first_token(), [0, 0, 0]).item() == pytest.approx(1.0)
    assert share_to_positions(first_token(), [1, 2]).item() == pytest.approx(0.0)


def test_share_to_positions_rejects_positions_outside_the_sequence():
    with pytest.raises(AttnvizError):
        share_to_positions(uniform(), [N])


def test_self_share_needs_square_patterns():
    with pytest.raises(AttnvizError):
        self_share(torch.full((3, 4), 0.25))


# ---- KL divergence -----------------------------------------------------------------------------


def test_kl_of_a_pattern_with_itself_is_zero():
    p = torch.softmax(torch.randn(4, N, N, generator=torch.Generator().manual_seed(0)), -1)
    assert row_kl_divergence(p, p).abs().max().item() < 1e-6


def test_kl_known_value_and_positive_for_different_rows():
    p = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    q = torch.tensor([[0.5, 0.5], [0.9, 0.1]])
    expected_row1 = 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1)
    assert row_kl_divergence(p, q).tolist() == pytest.approx([math.log(2.0), expected_row1], rel=1e-6)
    assert (row_kl_divergence(p, q) > 0).all()


def test_kl_is_not_symmetric():
    p = torch.tensor([[0.9, 0.1]])
    q = torch.tensor([[0.5, 0.5]])
    assert row_kl_divergence(p, q).item() != pytest.approx(row_kl_divergence(q, p).item())


def test_kl_where_q_forbids_a_key_p_uses_is_infinite_not_a_fake_number():
    p = torch.tensor([[0.5, 0.5], [1.0, 0.0]])
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0]])  # e.g. q under a causal mask
    kl = row_kl_divergence(p, q)
    assert kl[0].item() == math.inf  # q gives key 1 zero weight, p gives it 0.5
    assert kl[1].item() == 0.0  # p does not use the key q forbids: finite (here identical rows)
    assert infinite_rows(kl).tolist() == [True, False]
    capped = row_kl_divergence(p, q, eps=KL_EPSILON)[0].item()  # the optional floor: a capped number
    assert capped == pytest.approx(0.5 * math.log(0.5) + 0.5 * math.log(0.5 / KL_EPSILON), rel=1e-5)


def test_kl_of_fully_masked_rows_is_zero_not_nan():
    p = with_dead_row(uniform(), 2)
    q = with_dead_row(torch.eye(N), 3)
    kl = row_kl_divergence(p, q)
    assert kl.shape == (N,)
    assert not kl.isnan().any()
    assert kl[2].item() == 0.0 and kl[3].item() == 0.0
    assert kl[0].item() == math.inf  # uniform against one-hot on key 0: q gives the other keys zero weight


def test_kl_rejects_different_shapes():
    with pytest.raises(AttnvizError):
        row_kl_divergence(uniform(3), uniform(4))


# ---- fully masked rows: excluded, never NaN --------------------------------------------------


@pytest.mark.parametrize(
    "stat", [head_entropy, head_max_weight, mean_attention_distance, self_share, previous_token_share,
             lambda w: share_to_positions(w, [0])],
)
def test_every_statistic_survives_an_all_zero_pattern(stat):
    value = stat(torch.zeros(2, N, N))
    assert not value.isnan().any()
    assert (value == 0).all()


def test_dead_rows_are_left_out_of_the_means():
    # identity with row 2 fully masked: the four live rows still look only at themselves
    p = with_dead_row(torch.eye(N), 2)
    assert self_share(p).item() == pytest.approx(1.0)
    assert mean_attention_distance(p).item() == 0.0
    # first-token pattern with row 2 masked: live rows 0, 1, 3, 4 have distances 0, 1, 3, 4
    assert mean_attention_distance(with_dead_row(first_token(), 2)).item() == pytest.approx(2.0)
    assert share_to_positions(with_dead_row(first_token(), 2), [0]).item() == pytest.approx(1.0)
    # previous-token pattern with row 3 masked: rows 1, 2, 4 are live and all previous-token
    assert previous_token_share(with_dead_row(previous_token(), 3)).item() == pytest.approx(1.0)


def test_masked_softmax_output_with_empty_row_gives_finite_stats():
    mask = torch.ones(N, N, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    weights = masked_softmax(torch.randn(3, N, N), mask)  # (3, n, n)
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    rows = head_statistics(weights.unsqueeze(0), tokens)
    assert all(math.isfinite(v) for row in rows for v in row.values())


# ---- head_statistics -------------------------------------------------------------------------


def test_head_statistics_rows_and_known_values():
    tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    attentions = torch.stack([
        torch.stack([torch.eye(N), previous_token()]),
        torch.stack([uniform(), first_token()]),
    ])  # (L=2, H=2, n, n)
    rows = head_statistics(attentions, tokens)
    assert [(r["layer"], r["head"]) for r in rows] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert set(rows[0]) == {"layer", "head", "entropy", "max_weight", "mean_distance", "to_cls_sep_first",
                            "to_self", "to_previous"}
    assert all(type(v) is float for r in rows for k, v in r.items() if k not in ("layer", "head"))
    assert all(type(r["layer"]) is int and type(r["head"]) is int for r in rows)
    identity, prev, unif, first = rows
    assert identity["to_self"] == pytest.approx(1.0) and identity["mean_distance"] == 0.0
    assert identity["to_cls_sep_first"] == pytest.approx(1.0 / (N - 1))  # of rows 1..4, row 4 looks at [SEP]
    assert prev["to_previous"] == pytest.approx(1.0)
    assert unif["entropy"] == pytest.approx(math.log(N), abs=1e-6)
    assert unif["to_cls_sep_first"] == pytest.approx(2.0 / N)
    assert first["to_cls_sep_first"] == pytest.approx(1.0) and first["max_weight"] == pytest.approx(1.0)


def test_head_statistics_counts_position_zero_and_gpt2_specials():
    tokens = ["The", "Ġcat", "<|endoftext|>"]
    p = torch.zeros(1, 1, 3, 3)
    p[..., 2] = 1.0  # everything on <|endoftext|>
    assert head_statistics(p, tokens)[0]["to_cls_sep_first"] == pytest.approx(1.0)
    p = torch.zeros(1, 1, 3, 3)
    p[..., 0] = 1.0  # everything on the first token, not special
    assert head_statistics(p, tokens)[0]["to_cls_sep_first"] == pytest.approx(1.0)
    p = torch.zeros(1, 1, 3, 3)
    p[..., 1] = 1.0
    assert head_statistics(p, tokens)[0]["to_cls_sep_first"] == pytest.approx(0.0)


def test_head_statistics_rejects_token_count_mismatch_and_bad_shapes():
    with pytest.raises(AttnvizError):
        head_statistics(uniform().expand(1, 1, N, N), ["a", "b"])
    with pytest.raises(AttnvizError):
        head_statistics(uniform(), ["a"] * N)


def test_head_statistics_on_a_real_run():
    res = attnviz.load_model("toy").run("the cat sat on the mat", mask="causal")
    rows = head_statistics(res.attentions, res.tokens)
    L, H = res.attentions.shape[:2]
    assert len(rows) == L * H
    for r in rows:
        assert 0.0 <= r["entropy"] <= math.log(len(res.tokens)) + 1e-6
        assert 0.0 < r["max_weight"] <= 1.0 + 1e-6
        assert 0.0 <= r["to_self"] <= 1.0 + 1e-6
        assert r["to_self"] + r["to_previous"] <= 1.0 + 1e-5


# ---- properties --------------------------------------------------------------------------------


def random_masked_softmax(draw, heads: int, n: int) -> torch.Tensor:
    """(heads, n, n) softmax patterns under a random mask, fully masked rows included."""
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    scores = torch.randn(heads, n, n, generator=g) * draw(st.sampled_from([0.1, 1.0, 10.0, 100.0]))
    mask = torch.rand(n, n, generator=g) < draw(st.floats(0.0, 1.0))
    return masked_softmax(scores, mask)


@st.composite
def masked_patterns(draw):
    return random_masked_softmax(draw, draw(st.integers(1, 3)), draw(st.integers(1, 7)))


@st.composite
def pattern_pairs(draw):
    heads, n = draw(st.integers(1, 3)), draw(st.integers(1, 7))
    return random_masked_softmax(draw, heads, n), random_masked_softmax(draw, heads, n)


@settings(max_examples=50, deadline=None)
@given(masked_patterns())
def test_statistics_stay_in_range_and_finite(weights):
    n = weights.shape[-1]
    for value, high in (
        (head_entropy(weights), math.log(n)),
        (head_max_weight(weights), 1.0),
        (mean_attention_distance(weights), n - 1),
        (self_share(weights), 1.0),
        (previous_token_share(weights), 1.0),
        (share_to_positions(weights, [0]), 1.0),
    ):
        assert value.shape == weights.shape[:-2]
        assert torch.isfinite(value).all()
        assert (value >= -1e-6).all() and (value <= high + 1e-5).all()
    # all keys together carry all the weight of every live row
    everything = share_to_positions(weights, range(n))
    any_live = weights.sum(-1).gt(0.5).any(-1)
    assert torch.allclose(everything, any_live.float(), atol=1e-5)


@settings(max_examples=50, deadline=None)
@given(pattern_pairs())
def test_kl_is_never_nan_nonnegative_and_infinite_only_where_q_forbids_what_p_uses(pair):
    p, q = pair
    kl = row_kl_divergence(p, q)
    assert kl.shape == p.shape[:-1]
    assert not kl.isnan().any()
    assert (kl >= 0).all()
    uses_forbidden = ((p > 0) & (q == 0)).any(-1) & live_rows(p) & live_rows(q)
    assert torch.equal(torch.isinf(kl), uses_forbidden)
    capped = row_kl_divergence(p, q, eps=KL_EPSILON)
    assert torch.isfinite(capped).all() and (capped <= math.log(1.0 / KL_EPSILON) + 1e-3).all()
    assert row_kl_divergence(p, p).abs().max().item() < 1e-5


def test_head_statistics_shares_are_over_the_same_rows_so_self_and_previous_add_to_at_most_one():
    """A causal previous-token head: row 0 can only look at itself. Counted in 'to self' but not in 'to previous',
    it read 1/n + 1 > 1; over the same rows 1..n-1 it reads 0 and 1."""
    tokens = ["a", "b", "c", "d", "e"]
    rows = head_statistics(previous_token().expand(1, 1, N, N), tokens)
    assert rows[0]["to_self"] == pytest.approx(0.0) and rows[0]["to_previous"] == pytest.approx(1.0)
    assert rows[0]["to_cls_sep_first"] == pytest.approx(1.0 / (N - 1))  # only row 1's previous token is token 0
    assert self_share(previous_token(), first_row=1).item() == pytest.approx(0.0)
