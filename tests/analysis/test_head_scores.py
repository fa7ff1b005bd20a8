"""Head scores on synthetic attention patterns whose scores are known by construction."""

import pytest
import torch

from attnviz.analysis.head_scores import (
    best_head,
    induction_scores,
    per_token_loss,
    previous_token_scores,
    repeat_period,
    stripe_score,
)
from attnviz.errors import AttnvizError


def previous_token_pattern(n: int) -> torch.Tensor:
    """Each query puts all its weight on the token before it (token 0 on itself)."""
    a = torch.zeros(n, n)
    a[0, 0] = 1.0
    a[torch.arange(1, n), torch.arange(0, n - 1)] = 1.0
    return a


def induction_pattern(period: int, first: int = 1) -> torch.Tensor:
    """[BOS] A A: second-copy queries look at the token after their earlier occurrence; others at [BOS]."""
    n = first + 2 * period
    a = torch.zeros(n, n)
    a[:, 0] = 1.0
    for q in range(first + period, n):
        a[q, 0] = 0.0
        a[q, q - period + 1] = 1.0
    return a


def test_pure_previous_token_pattern_scores_one():
    scores = previous_token_scores(previous_token_pattern(7)[None, None])
    assert scores.shape == (1, 1)
    assert scores.item() == pytest.approx(1.0)


def test_uniform_pattern_scores_one_over_n():
    n = 10
    uniform = torch.full((1, 1, n, n), 1.0 / n)
    assert previous_token_scores(uniform).item() == pytest.approx(1.0 / n)
    assert induction_scores(uniform, period=4, first=1).item() == pytest.approx(1.0 / n)


def test_causal_uniform_previous_token_score_is_mean_of_inverse_row_lengths():
    n = 6
    causal_uniform = torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]
    expected = sum(1.0 / (q + 1) for q in range(1, n)) / (n - 1)
    assert previous_token_scores(causal_uniform[None, None]).item() == pytest.approx(expected)


def test_induction_pattern_scores_one_and_previous_token_zero_ish():
    a = induction_pattern(period=5)[None, None]
    assert induction_scores(a, period=5).item() == pytest.approx(1.0)
    # the previous-token pattern is not an induction pattern
    assert induction_scores(previous_token_pattern(11)[None, None], period=5).item() == pytest.approx(0.0)


def test_scores_per_layer_and_head_and_best_head():
    n, period = 9, 4
    heads = torch.stack([torch.full((n, n), 1.0 / n), previous_token_pattern(n), induction_pattern(period)])
    attn = torch.stack([heads, heads.flip(0)])  # (2 layers, 3 heads, n, n)
    prev = previous_token_scores(attn)
    ind = induction_scores(attn, period)
    assert prev.shape == ind.shape == (2, 3)
    assert best_head(prev) == (0, 1)
    assert best_head(ind) == (0, 2)
    assert ind[1, 0].item() == pytest.approx(1.0)


def test_stripe_score_reads_exactly_the_diagonal():
    a = torch.arange(16.0).view(4, 4)
    assert stripe_score(a, 2, range(2, 4)).item() == pytest.approx((a[2, 0] + a[3, 1]).item() / 2)


def test_too_short_for_the_repeat_is_a_clear_error():
    with pytest.raises(AttnvizError, match="does not fit"):
        induction_scores(torch.zeros(1, 1, 6, 6), period=4)
    with pytest.raises(AttnvizError, match="longer sequence"):
        previous_token_scores(torch.ones(1, 1, 1, 1))


def test_repeat_period_finds_the_repeated_block():
    assert repeat_period([1, 7, 8, 9, 7, 8, 9]) == (3, 1)
    assert repeat_period([1, 5, 7, 8, 7, 8]) == (2, 2)
    assert repeat_period([1, 2, 3, 4]) is None


def test_per_token_loss_matches_cross_entropy():
    torch.manual_seed(0)
    logits = torch.randn(5, 11)
    ids = [3, 1, 4, 1, 5]
    loss = per_token_loss(logits, ids)
    expected = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="none")
    torch.testing.assert_close(loss, expected)
    # a model sure of the right token has ~0 loss there
    sure = torch.full((3, 4), -30.0)
    sure[0, 2] = sure[1, 3] = 30.0
    assert per_token_loss(sure, [0, 2, 3]).max().item() < 1e-6
