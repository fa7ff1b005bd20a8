"""The model view in Streamlit's AppTest: every head drawn as attnviz computes it, stats and rollout included."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

from attnviz.analysis.rollout import attention_rollout
from attnviz.analysis.stats import head_statistics
from attnviz.draw.plotting import WEIGHT_STEPS, decode_plotly_array, weights_as_thousandths
from attnviz.lessons.model_view import thumbnail_titles, thumbnails

PAGE = "pages/model_view.py"
TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def default_page():
    return run_app({"text": TEXT}, page=PAGE)


def drawn_thumbnails(at) -> list[tuple[str, np.ndarray]]:
    """(name, uint16 thousandths) of each thumbnail of the mosaic (one plotly figure until heatmap_grid has
    a thumbnail mode; see pages/model_view.py)."""
    return [(t["name"], decode_plotly_array(t["z"])) for t in chart_specs(at)["mv_grid"]["data"]]


def focus(at) -> np.ndarray:
    return drawn_heatmap(at, "mv_focus")[0]


def test_grid_draws_every_layer_and_head_as_attnviz_computes(default_page, minilm):
    at = default_page
    assert_healthy(at)
    res = minilm.run(TEXT)
    drawn = drawn_thumbnails(at)
    assert len(drawn) == minilm.n_layers * minilm.n_heads == 72
    for k, (name, z) in enumerate(drawn):
        layer, head = divmod(k, minilm.n_heads)
        assert name == f"L{layer} H{head}"
        np.testing.assert_array_equal(z, weights_as_thousandths(res.attentions[layer, head]))
    # what heatmap_grid will get once it draws thumbnails: the same patterns, titled per head
    pooled, labels, block = thumbnails(res.attentions, res.labels)
    assert block == 1 and labels == res.labels and np.allclose(pooled[13], res.attentions[1, 1].numpy())
    assert thumbnail_titles(2, 3, highlight=(1, 2))[-1] == "▶ L1 H2 ◀" and thumbnail_titles(2, 3)[4] == "L1 H1"
    np.testing.assert_allclose(focus(at), res.attentions[0, 0].numpy(), atol=0.0005 + 1e-7)


def test_choosing_a_layer_and_head_enlarges_that_head(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    before = chart_specs(at)["mv_grid"]["layout"]["shapes"][0]
    at.selectbox(key="mv_layer").set_value(3)
    at.selectbox(key="mv_head").set_value(7)
    at.run()
    assert_healthy(at)
    res = minilm.run(TEXT)
    np.testing.assert_allclose(focus(at), res.attentions[3, 7].numpy(), atol=0.0005 + 1e-7)
    assert not np.allclose(focus(at), res.attentions[0, 0].numpy(), atol=0.01)
    frame = chart_specs(at)["mv_grid"]["layout"]["shapes"][0]
    assert frame["x0"] > before["x0"] and frame["y0"] > before["y0"]  # the frame moved to L3 H7


def test_statistics_table_equals_head_statistics(default_page, minilm):
    at = default_page
    res = minilm.run(TEXT)
    expected = head_statistics(res.attentions, res.tokens)
    table = at.dataframe[0].value
    assert len(table) == len(expected) == 72
    for name in expected[0]:
        np.testing.assert_allclose(table[name].to_numpy(dtype=float), [row[name] for row in expected], rtol=1e-6)


def test_statistic_picker_changes_the_map(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    res = minilm.run(TEXT)
    rows = head_statistics(res.attentions, res.tokens)
    for statistic in ("entropy", "to_previous"):
        at.selectbox(key="mv_stat").set_value(statistic).run()
        z = decode_plotly_array(chart_specs(at)["mv_stats"]["data"][0]["z"]).astype(float)
        np.testing.assert_allclose(z.reshape(-1), [r[statistic] for r in rows], rtol=1e-5)


def test_rollout_rows_sum_to_1_and_the_slider_picks_the_layer(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    rollout = attention_rollout(minilm.run(TEXT).attentions)  # (L, n, n)
    z = drawn_heatmap(at, "mv_rollout")[0]
    n = z.shape[0]
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=n * 0.0005)  # thousandths round each cell by ≤ 0.0005
    np.testing.assert_allclose(z, rollout[-1].numpy(), atol=0.0005 + 1e-7)
    at.select_slider(key="mv_rollout_layer").set_value(0).run()
    z0 = drawn_heatmap(at, "mv_rollout")[0]
    np.testing.assert_allclose(z0, rollout[0].numpy(), atol=0.0005 + 1e-7)
    assert not np.allclose(z0, z, atol=0.01)


def test_long_text_pools_thumbnails_and_says_so(toy):
    text = " ".join(f"word{i}" for i in range(60))
    at = run_app({"model": "toy", "text": text}, page=PAGE)
    assert_healthy(at)
    drawn = drawn_thumbnails(at)
    assert len(drawn) == toy.n_layers * toy.n_heads
    n = len(toy.run(text).tokens)
    block = -(-n // 32)
    assert drawn[0][1].shape == (-(-n // block),) * 2
    assert f"{block}×{block}" in page_text(at) and "shows every token" in page_text(at)
    assert np.all(np.abs(drawn[0][1].sum(-1) / WEIGHT_STEPS - 1) < 0.02)  # pooled rows still sum to 1
    assert focus(at).shape == (n, n)  # the enlarged head keeps every token


def test_empty_text_gives_a_clear_message():
    at = run_app({"model": "toy"}, page=PAGE)
    at.text_area(key="text").input("").run()
    assert not at.exception
    assert any("Type some text" in w.value for w in at.warning)
    assert "mv_grid" not in chart_specs(at)
