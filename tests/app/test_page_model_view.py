"""The model view in Streamlit's AppTest: every head drawn as attnviz computes it, a click on a thumbnail
enlarges that head, stats and rollout included."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, heatmap_payloads, page_text, run_app

import attnviz
from attnviz.analysis.rollout import attention_rollout
from attnviz.analysis.stats import head_statistics
from attnviz.draw.heatmap_payload import decode_payload, precision
from attnviz.draw.value_map import map_values
from attnviz.lessons.model_view import thumbnail_titles, thumbnails

PAGE = "app_pages/model_view.py"
TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def default_page():
    return run_app({"text": TEXT}, page=PAGE)


def drawn_thumbnails(at) -> tuple[dict, np.ndarray]:
    """The grid's payload as the browser gets it: (its JSON block, (L·H, m, m) weights as drawn)."""
    return decode_payload(heatmap_payloads(at)["mv_grid"])


def focus(at) -> np.ndarray:
    return drawn_heatmap(at, "mv_focus")[0]


def click(at, selection):
    """A click on the grid, written into the component's state as the browser would."""
    at.session_state["mv_grid"] = {"selection": selection}
    return at.run()


def assert_thumbnails_are_attnviz(at, res, n_layers: int, n_heads: int) -> dict:
    meta, drawn = drawn_thumbnails(at)
    pooled, labels, block = thumbnails(res.attentions, res.labels)
    assert meta["thumbnails"] and meta["selectable"] and meta["columns"] == n_heads
    assert meta["titles"] == thumbnail_titles(n_layers, n_heads) and meta["row_labels"] == labels
    assert drawn.shape == pooled.shape == (n_layers * n_heads, *pooled.shape[1:])
    assert np.abs(drawn - pooled).max() <= precision(meta) + 1e-7  # uint8: to half of 1/254
    return meta


def test_grid_draws_every_layer_and_head_as_attnviz_computes(default_page, minilm):
    at = default_page
    assert_healthy(at)
    res = minilm.run(TEXT)
    meta = assert_thumbnails_are_attnviz(at, res, 6, 12)
    _, drawn = drawn_thumbnails(at)
    np.testing.assert_allclose(drawn[13], res.attentions[1, 1].numpy(), atol=precision(meta) + 1e-7)  # L1 H1, every token
    assert meta["bytes_per_cell"] == 1 and meta["highlight"] == 0  # L0 H0 framed: the head enlarged below
    np.testing.assert_allclose(focus(at), res.attentions[0, 0].numpy(), atol=1e-4)


def test_choosing_a_layer_and_head_enlarges_and_frames_that_head(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    at.selectbox(key="mv_layer").set_value(3)
    at.selectbox(key="mv_head").set_value(7)
    at.run()
    assert_healthy(at)
    res = minilm.run(TEXT)
    np.testing.assert_allclose(focus(at), res.attentions[3, 7].numpy(), atol=1e-4)
    assert not np.allclose(focus(at), res.attentions[0, 0].numpy(), atol=0.01)
    assert drawn_thumbnails(at)[0]["highlight"] == 3 * 12 + 7


def test_a_click_on_a_thumbnail_enlarges_that_head_and_the_pickers_still_work(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    res = minilm.run(TEXT)
    at = click(at, {"panel": 41, "row": 2, "col": 5, "t": 1})  # panel 41 = layer 41 // 12, head 41 % 12; t = when
    assert_healthy(at)
    np.testing.assert_allclose(focus(at), res.attentions[3, 5].numpy(), atol=1e-4)
    assert (at.selectbox(key="mv_layer").value, at.selectbox(key="mv_head").value) == (3, 5)
    assert at.query_params["mv_layer"] == "3" and at.query_params["mv_head"] == "5"  # a link shares it
    assert drawn_thumbnails(at)[0]["highlight"] == 41 and "layer 3, head 5" in drawn_heatmap_title(at)
    at.selectbox(key="mv_head").set_value(1).run()  # the old click does not come back and undo the picker
    np.testing.assert_allclose(focus(at), res.attentions[3, 1].numpy(), atol=1e-4)
    at.run()  # the browser sends the grid's last state with every rerun: it is not taken again
    np.testing.assert_allclose(focus(at), res.attentions[3, 1].numpy(), atol=1e-4)
    at = click(at, {"panel": 41, "row": 2, "col": 5, "t": 2})  # the same cell clicked again later counts again
    np.testing.assert_allclose(focus(at), res.attentions[3, 5].numpy(), atol=1e-4)


def drawn_heatmap_title(at) -> str:
    return decode_payload(heatmap_payloads(at)["mv_focus"])[0]["titles"][0]


@pytest.mark.parametrize("garbage", [{"panel": 72, "row": 0, "col": 0}, {"panel": -1, "row": 0, "col": 0},
                                     {"panel": "x", "row": 0, "col": 0}, {"panel": 3}, "L1 H1", [3, 0, 0],
                                     {"panel": 3, "row": 99, "col": 0}])
def test_a_garbage_selection_changes_nothing(minilm, garbage):
    at = run_app({"text": TEXT, "mv_layer": "2", "mv_head": "4"}, page=PAGE)
    at = click(at, garbage)
    assert_healthy(at)
    np.testing.assert_allclose(focus(at), minilm.run(TEXT).attentions[2, 4].numpy(), atol=1e-4)
    assert drawn_thumbnails(at)[0]["highlight"] == 2 * 12 + 4


def test_toy_and_tiny_llama_grids_have_their_own_shapes(toy):
    text = "the cat sat on the mat"
    at = click(run_app({"model": "toy", "text": text}, page=PAGE), {"panel": 3, "row": 1, "col": 1})
    assert_healthy(at)
    res = toy.run(text)
    assert_thumbnails_are_attnviz(at, res, 2, 2)
    np.testing.assert_allclose(focus(at), res.attentions[1, 1].numpy(), atol=1e-4)  # panel 3 = L1 H1
    llama = attnviz.load_model("attnviz-tiny-llama")
    at = click(run_app({"model": "tiny-llama", "text": text}, page=PAGE), {"panel": 6, "row": 0, "col": 0})
    assert_healthy(at)
    res = llama.run(text)
    assert_thumbnails_are_attnviz(at, res, 2, 4)
    np.testing.assert_allclose(focus(at), res.attentions[1, 2].numpy(), atol=1e-4)  # panel 6 = L1 H2


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
        maps = [map_values(str(h.proto.body)) for h in at.get("html") if 'class="av-map"' in str(h.proto.body)]
        assert len(maps) == 1
        np.testing.assert_allclose(maps[0], [r[statistic] for r in rows], rtol=1e-5)


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


def test_long_text_pools_thumbnails_and_says_so(minilm):
    words = ("the teacher asked why the cat sat on the mat and the class wrote down what each head looked at " * 20).split()
    text = " ".join(words[:290])
    at = run_app({"text": text}, page=PAGE)
    assert_healthy(at)
    res = minilm.run(text)
    n = len(res.tokens)
    block = -(-n // 32)
    assert n > 256 and block > 1
    meta = assert_thumbnails_are_attnviz(at, res, 6, 12)
    _, drawn = drawn_thumbnails(at)
    assert drawn.shape == (72, -(-n // block), -(-n // block)) and meta["row_labels"][1] == f"{res.labels[block]}…"
    assert f"{block}×{block}" in page_text(at) and "shows every token" in page_text(at)
    np.testing.assert_allclose(drawn.sum(-1), 1.0, atol=drawn.shape[-1] * precision(meta) + 1e-6)  # rows still sum to 1
    assert focus(at).shape == (n, n)  # the enlarged head keeps every token
    assert len(heatmap_payloads(at)["mv_grid"]) <= 1.1 * drawn.size  # uint8 cells plus a small JSON block


def test_empty_text_gives_a_clear_message():
    at = run_app({"model": "toy"}, page=PAGE)
    at.text_area(key="text").input("").run()
    assert not at.exception
    assert any("Type some text" in w.value for w in at.warning)
    assert "mv_grid" not in chart_specs(at) and "mv_grid" not in heatmap_payloads(at)


def test_the_shares_are_over_the_same_rows_and_the_page_says_so(default_page):
    """MiniLM's layer 0, head 2 is a previous-token head whose row 0 ([CLS]) looks at itself: counted in 'to self'
    but not in 'to previous', it read 0.077 and 1.000, more than 1 together."""
    at = default_page
    table = at.dataframe[0].value
    l0h2 = table[(table["layer"] == 0) & (table["head"] == 2)].iloc[0]
    assert l0h2["to_previous"] > 0.99 and l0h2["to_self"] < 0.01
    assert ((table["to_self"] + table["to_previous"]) <= 1 + 1e-5).all()
    assert "The three shares are means over the same query rows, 1 … n − 1 (row 0 has no token before it)" \
        in page_text(at)


def test_rollout_is_labelled_as_rollout_not_as_a_weight_after_softmax(default_page):
    legend = decode_payload(heatmap_payloads(default_page)["mv_rollout"])[0]["legend"]
    assert "weight after softmax" not in legend["title"] and legend["title"].startswith("rollout: share of the input")
    assert legend["hover"] == "rollout share"
    focus = decode_payload(heatmap_payloads(default_page)["mv_focus"])[0]["legend"]
    assert focus["title"] == "weight after softmax" and "hover" not in focus  # a real head keeps its words
