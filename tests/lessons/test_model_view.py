"""The model view's numbers: pooling that keeps row sums, thumbnails in layer-major order with their labels and
titles, the panel <-> (layer, head) map, and a grid payload that stays about one byte per pooled cell."""


import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.analysis.stats import head_statistics
from attnviz.draw.heatmap_payload import HEADER, decode_payload, heatmap_payload, precision
from attnviz.draw.value_map import map_values
from attnviz.errors import AttnvizError
from attnviz.lessons.model_view import (
    STATISTICS,
    head_of_thumbnail,
    pool_patterns,
    pooled_block_size,
    pooled_labels,
    statistics_grid,
    statistics_map,
    thumbnail_of,
    thumbnail_titles,
    thumbnails,
)


def random_attentions(L: int, H: int, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(L, H, n, n, generator=g), -1)  # (L, H, n, n)


def test_thumbnails_are_every_head_in_layer_major_order():
    a = random_attentions(3, 4, 7)
    pooled, labels, block = thumbnails(a, [f"t{i}" for i in range(7)])
    assert block == 1 and labels == [f"t{i}" for i in range(7)] and pooled.shape == (12, 7, 7)
    for p in range(12):
        layer, head = head_of_thumbnail(p, 4)
        assert thumbnail_of(layer, head, 4) == p
        np.testing.assert_array_equal(pooled[p], a[layer, head].numpy())
    assert head_of_thumbnail(6, 4) == (1, 2)


def test_long_texts_are_pooled_to_at_most_max_cells():
    a = random_attentions(1, 2, 100)
    pooled, labels, block = thumbnails(a, [str(i) for i in range(100)], max_cells=32)
    assert block == 4 and pooled.shape == (2, 25, 25)
    assert labels == pooled_labels([str(i) for i in range(100)], 4) and labels[:2] == ["0…", "4…"] and len(labels) == 25
    np.testing.assert_allclose(pooled, pool_patterns(a.numpy(), 4).reshape(2, 25, 25))


def test_pooled_labels_name_each_blocks_first_token():
    assert pooled_labels(["[CLS]", "a", "b", "c", "[SEP]"], 2) == ["[CLS]…", "b…", "[SEP]…"]
    assert pooled_labels(["a", "b"], 1) == ["a", "b"]


def test_thumbnail_titles_name_layer_and_head():
    assert thumbnail_titles(2, 3) == ["L0 H0", "L0 H1", "L0 H2", "L1 H0", "L1 H1", "L1 H2"]
    assert thumbnail_titles(6, 12)[thumbnail_of(2, 5, 12)] == "L2 H5"


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
        thumbnails(random_attentions(1, 1, 3), ["a", "b"])
    with pytest.raises(AttnvizError, match="layers, heads"):
        thumbnails(torch.ones(2, 3, 3), ["a", "b", "c"])
    with pytest.raises(AttnvizError, match="square"):
        pool_patterns(np.ones((2, 3)), 2)


@pytest.mark.parametrize("n", [128, 512])
def test_the_grid_payload_is_about_one_byte_per_pooled_cell_for_6_by_12(n):
    """What the model view sends for its grid: uint8 cells plus a JSON block of titles and labels."""
    a = random_attentions(6, 12, n)
    pooled, labels, block = thumbnails(a, [f"tok{i}" for i in range(n)])
    payload = heatmap_payload(pooled, labels, titles=thumbnail_titles(6, 12), columns=12, thumbnails=True,
                              selectable=True, highlight=thumbnail_of(2, 3, 12), name="mv_grid")
    meta, drawn = decode_payload(payload)
    json_block = len(payload) - HEADER.size - pooled.size
    assert block > 1 and pooled.shape == (72, 32, 32) and meta["bytes_per_cell"] == 1
    assert len(payload) <= 1.1 * pooled.size and json_block < 0.1 * pooled.size  # 73,728 cells, a few kB of JSON
    assert len(payload) / a.numel() <= 1.1 * (32 / n) ** 2  # per weight of the (6, 12, n, n) tensor: ≤ 0.07 B at 128
    assert meta["highlight"] == 27 and np.abs(drawn - pooled).max() <= precision(meta) + 1e-7


def test_statistics_grid_and_map_match_head_statistics():
    a = random_attentions(2, 3, 5)
    rows = head_statistics(a, ["[CLS]", "a", "b", "c", "[SEP]"])
    grid = statistics_grid(rows, "to_self")
    assert grid.shape == (2, 3)
    assert grid[1, 2] == pytest.approx(next(r["to_self"] for r in rows if (r["layer"], r["head"]) == (1, 2)))
    shown = map_values(statistics_map(rows, "entropy"))
    np.testing.assert_allclose(shown, statistics_grid(rows, "entropy").reshape(-1), rtol=1e-6)
    assert set(STATISTICS) <= set(rows[0])
    with pytest.raises(AttnvizError, match="Unknown head statistic"):
        statistics_grid(rows, "colour")
