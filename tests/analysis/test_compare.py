"""Comparing two patterns and two runs: known differences, KL, and the errors a page shows."""

import math

import pytest
import torch

import attnviz
from attnviz.analysis.compare import PatternComparison, compare_patterns, compare_results
from attnviz.engine.models.model import RunResult
from attnviz.errors import AttnvizError

N = 4


def run_result(tokens, attentions) -> RunResult:
    return RunResult(tokens=list(tokens), labels=list(tokens), token_ids=list(range(len(tokens))),
                     attentions=attentions, mask=None, scale=1.0, truncated=False)


def test_identical_patterns_have_no_difference():
    p = torch.softmax(torch.randn(N, N), -1)
    c = compare_patterns(p, p)
    assert c.difference.abs().max().item() == 0.0
    assert c.row_kl.abs().max().item() < 1e-6
    assert c.entropy_change == 0.0 and c.max_weight_change == 0.0


def test_uniform_against_identity_known_answers():
    uniform = torch.full((N, N), 1.0 / N)
    c = compare_patterns(uniform, torch.eye(N))
    torch.testing.assert_close(c.difference, uniform - torch.eye(N))  # a minus b
    assert c.entropy_a == pytest.approx(math.log(N), abs=1e-6) and c.entropy_b == pytest.approx(0.0, abs=1e-6)
    assert c.entropy_change == pytest.approx(math.log(N), abs=1e-6)  # a is the more spread out
    assert c.max_weight_change == pytest.approx(1.0 / N - 1.0)  # a is the less peaked
    assert torch.isinf(c.row_kl).all()  # identity gives zero weight to keys that uniform uses: KL is ∞
    assert c.summary()["mean_kl"] == math.inf and c.summary()["infinite_rows"] == N


def test_kl_direction_is_a_against_b():
    a = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    b = torch.tensor([[0.5, 0.5], [0.5, 0.5]])
    c = compare_patterns(a, b)
    assert c.row_kl.tolist() == pytest.approx([math.log(2.0), 0.0], abs=1e-6)


def test_summary_is_plain_floats():
    c = compare_patterns(torch.full((N, N), 1.0 / N), torch.eye(N))
    summary = c.summary()
    assert {"entropy_change", "max_weight_change", "mean_kl", "max_kl", "max_abs_difference"} <= set(summary)
    assert all(type(v) is float for v in summary.values())
    assert summary["max_abs_difference"] == pytest.approx(1.0 - 1.0 / N)


def test_fully_masked_rows_never_give_nan():
    a = torch.softmax(torch.randn(N, N), -1)
    a[1] = 0.0  # fully masked in a
    b = torch.zeros(N, N)  # fully masked everywhere in b
    c = compare_patterns(a, b)
    assert not c.row_kl.isnan().any() and not c.difference.isnan().any()
    assert not c.compared_rows.any()
    assert all(math.isfinite(v) for v in c.summary().values())
    assert c.summary()["mean_kl"] == 0.0


def test_summary_kl_uses_only_rows_live_in_both():
    a = torch.full((2, 2), 0.5)
    b = torch.tensor([[1.0, 0.0], [0.0, 0.0]])  # row 1 fully masked in b
    summary = compare_patterns(a, b).summary()
    assert summary["mean_kl"] == pytest.approx(summary["max_kl"])  # one compared row only


@pytest.mark.parametrize("a,b", [(torch.ones(3, 3), torch.ones(4, 4)), (torch.ones(3, 4), torch.ones(3, 4)),
                                 (torch.ones(2, 3, 3), torch.ones(2, 3, 3))])
def test_compare_patterns_rejects_shapes(a, b):
    with pytest.raises(AttnvizError):
        compare_patterns(a, b)


def test_compare_results_same_tokens():
    g = torch.Generator().manual_seed(0)
    atts_a = torch.softmax(torch.randn(2, 3, N, N, generator=g), -1)
    atts_b = torch.softmax(torch.randn(2, 3, N, N, generator=g), -1)
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    c = compare_results(run_result(tokens, atts_a), run_result(tokens, atts_b), layer=1, head=2)
    assert isinstance(c, PatternComparison) and c.same_tokens
    torch.testing.assert_close(c.difference, atts_a[1, 2] - atts_b[1, 2])


def test_compare_results_other_tokens_same_length_still_compares_but_flags():
    atts = torch.full((1, 1, N, N), 1.0 / N)
    c = compare_results(run_result(["a", "b", "c", "d"], atts), run_result(["a", "b", "x", "d"], atts), 0, 0)
    assert c.same_tokens is False
    assert c.difference.abs().max().item() == 0.0


def test_compare_results_different_lengths_is_a_clear_error():
    a = run_result(["a", "b", "c", "d"], torch.full((1, 1, 4, 4), 0.25))
    b = run_result(["a", "b", "c"], torch.full((1, 1, 3, 3), 1 / 3))
    with pytest.raises(AttnvizError, match="different numbers of tokens"):
        compare_results(a, b, 0, 0)


@pytest.mark.parametrize("layer,head", [(2, 0), (0, 3), (-1, 0)])
def test_compare_results_missing_layer_or_head(layer, head):
    res = run_result(["a", "b"], torch.full((2, 3, 2, 2), 0.5))
    with pytest.raises(AttnvizError):
        compare_results(res, res, layer, head)


def test_compare_results_on_real_runs_scaled_vs_unscaled():
    model = attnviz.load_model("toy")
    text = "the cat sat on the mat"
    c = compare_results(model.run(text, scale=False), model.run(text, scale=True), layer=0, head=0)
    assert c.same_tokens
    # no scaling sharpens the softmax: less entropy, a larger max weight
    assert c.entropy_change < 0 and c.max_weight_change > 0
    assert c.summary()["mean_kl"] > 0
