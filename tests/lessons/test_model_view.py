"""The model view's figures: one trace per head, pooling that keeps row sums, bytes per cell."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.analysis.stats import head_statistics
from attnviz.draw.plotting import decode_plotly_array, head_figure, weights_as_thousandths
from attnviz.errors import AttnvizError
from attnviz.lessons.model_view import (
    STATISTICS,
    bytes_per_cell,
    model_view_figure,
    pool_patterns,
    pooled_block_size,
    statistics_figure,
    statistics_grid,
)


def random_attentions(L: int, H: int, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(L, H, n, n, generator=g), -1)  # (L, H, n, n)


def sent(fig) -> dict:
    return json.loads(fig.to_json())


def test_grid_has_one_trace_per_layer_and_head_in_order():
    a = random_attentions(3, 4, 7)
    fig, block = model_view_figure(a, [f"t{i}" for i in range(7)])
    spec = sent(fig)
    assert block == 1
    assert [t["type"] for t in spec["data"]] == ["heatmap"] * 12
    assert [t["name"] for t in spec["data"]] == [f"L{layer} H{head}" for layer in range(3) for head in range(4)]
    z = decode_plotly_array(spec["data"][6]["z"])  # layer 1, head 2
    np.testing.assert_array_equal(z, weights_as_thousandths(a[1, 2]))


def test_thumbnails_share_one_pair_of_axes_and_do_not_overlap():
    fig, _ = model_view_figure(random_attentions(2, 3, 5), list("abcde"))
    spec = sent(fig)
    assert {t.get("xaxis", "x") for t in spec["data"]} == {"x"}
    starts = {(t["x0"], t["y0"]) for t in spec["data"]}
    assert len(starts) == 6
    xs = sorted({x for x, _ in starts})
    assert min(np.diff(xs)) > 5  # each thumbnail is 5 cells wide, plus a gap


def test_thumbnail_axes_hide_tokens():
    fig, _ = model_view_figure(random_attentions(1, 2, 4), ["[CLS]", "a", "b", "[SEP]"])
    spec = sent(fig)
    assert spec["layout"]["xaxis"]["ticktext"] == ["H0", "H1"]
    assert "[CLS]" not in fig.to_json()


def test_long_texts_are_pooled_to_at_most_max_cells():
    fig, block = model_view_figure(random_attentions(1, 2, 100), [str(i) for i in range(100)], max_cells=32)
    assert block == 4
    z = decode_plotly_array(sent(fig)["data"][0]["z"])
    assert z.shape == (25, 25)


def test_pooling_sums_keys_and_averages_queries():
    a = np.array([[1.0, 0.0, 0.0, 0.0],
                  [0.0, 0.5, 0.5, 0.0],
                  [0.0, 0.0, 0.0, 1.0],
                  [0.25, 0.25, 0.25, 0.25]], dtype=np.float32)
    pooled = pool_patterns(a, 2)
    np.testing.assert_allclose(pooled, [[0.75, 0.25], [0.25, 0.75]])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), block=st.integers(1, 9), seed=st.integers(0, 1000))
def test_pooling_keeps_row_sums(n, block, seed):
    a = random_attentions(2, 1, n, seed).numpy()
    pooled = pool_patterns(a, block)  # (2, 1, m, m)
    assert pooled.shape[-1] == -(-n // block)
    np.testing.assert_allclose(pooled.sum(-1), 1.0, atol=1e-5)


def test_block_size_and_bad_inputs():
    assert pooled_block_size(32, 32) == 1
    assert pooled_block_size(33, 32) == 2
    assert pooled_block_size(512, 32) == 16
    with pytest.raises(AttnvizError):
        pooled_block_size(10, 0)
    with pytest.raises(AttnvizError, match="labels"):
        model_view_figure(random_attentions(1, 1, 3), ["a", "b"])
    with pytest.raises(AttnvizError, match="layers, heads"):
        model_view_figure(torch.ones(2, 3, 3), ["a", "b", "c"])


def test_highlight_frames_the_chosen_thumbnail():
    fig, _ = model_view_figure(random_attentions(2, 3, 6), list("abcdef"), highlight=(1, 2))
    spec = sent(fig)
    (shape,) = spec["layout"]["shapes"]
    target = spec["data"][1 * 3 + 2]
    assert shape["x0"] < target["x0"] < target["x0"] + 5 < shape["x1"]
    assert shape["y0"] < target["y0"] < target["y0"] + 5 < shape["y1"]


@pytest.mark.parametrize("n", [128, 512])
def test_bytes_per_cell_at_most_3_for_6_by_12(n):
    a = random_attentions(6, 12, n)
    labels = [f"tok{i}" for i in range(n)]
    grid, block = model_view_figure(a, labels, highlight=(2, 3))
    focus = head_figure(a[2, 3], labels, "layer 2, head 3")
    assert block > 1
    assert bytes_per_cell(a.shape, grid, focus) <= 3.0


def test_statistics_grid_and_figure_match_head_statistics():
    a = random_attentions(2, 3, 5)
    rows = head_statistics(a, ["[CLS]", "a", "b", "c", "[SEP]"])
    grid = statistics_grid(rows, "to_self")
    assert grid.shape == (2, 3)
    assert grid[1, 2] == pytest.approx(next(r["to_self"] for r in rows if (r["layer"], r["head"]) == (1, 2)))
    z = decode_plotly_array(sent(statistics_figure(rows, "entropy"))["data"][0]["z"])
    np.testing.assert_allclose(z, statistics_grid(rows, "entropy"))
    assert set(STATISTICS) <= set(rows[0])
    with pytest.raises(AttnvizError, match="Unknown head statistic"):
        statistics_grid(rows, "colour")
