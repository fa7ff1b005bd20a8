"""The comparison figures: the difference heatmap holds A − B, the colour range is symmetric, KL bars."""

import numpy as np
import pytest
import torch

from attnviz.analysis.compare import compare_patterns
from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.compare.figures import kl_text, row_kl_figure, symmetric_range

LABELS = ["[CLS]", "a", "a", "[SEP]"]


def patterns(seed=0, n=4):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(n, n, generator=g), -1), torch.softmax(torch.randn(n, n, generator=g), -1)


def test_identical_patterns_still_get_a_readable_range():
    assert symmetric_range(np.zeros((3, 3))) == pytest.approx(0.01)
    assert symmetric_range(np.array([[0.123, -0.5]])) == pytest.approx(0.5)
    assert symmetric_range(np.array([[0.501]])) == pytest.approx(0.51)


def test_kl_bars_and_mean_over_compared_rows():
    a, b = patterns(2)
    b[3] = 0.0  # query 3 fully masked in B
    c = compare_patterns(a, b)
    fig = row_kl_figure(c.row_kl, LABELS, c.compared_rows)
    y = decode_plotly_array(fig.to_plotly_json()["data"][0]["y"])
    np.testing.assert_allclose(y, c.row_kl.numpy(), rtol=1e-6)
    mean = float(c.row_kl[:3].mean())
    line = fig.layout.shapes[0]
    assert line.y0 == pytest.approx(mean, rel=1e-5)
    assert f"{mean:.3f}" in fig.layout.annotations[0].text
    assert fig.data[0].marker.color[3] == "#bbbbbb" and fig.data[0].marker.color[0] != "#bbbbbb"


def test_infinite_kl_rows_are_drawn_as_infinite_never_as_a_capped_number():
    a = torch.full((4, 4), 0.25)  # A spreads evenly
    b = torch.tril(torch.ones(4, 4))
    b = b / b.sum(-1, keepdim=True)  # B causal: zero weight on later keys, which A uses
    c = compare_patterns(a, b)
    assert torch.isinf(c.row_kl[:3]).all() and c.row_kl[3].item() == pytest.approx(0.0, abs=1e-6)
    fig = row_kl_figure(c.row_kl, LABELS, c.compared_rows)
    bars = fig.data[0]
    assert list(bars.text) == ["∞", "∞", "∞", ""]
    assert list(bars.customdata[:3]) == ["∞"] * 3
    assert "mean ∞ nats" in fig.layout.annotations[0].text
    assert kl_text(float("inf")) == "∞" and kl_text(0.12345) == "0.123"
