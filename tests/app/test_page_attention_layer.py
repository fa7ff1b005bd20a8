"""The attention-as-a-layer page in AppTest: every step draws, and the numbers on screen are attnviz's own
(recomputed here through the lesson package, not read back from the page's arithmetic)."""

import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, drawn_heatmap, menu_sections, page_text, run_app

from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import FEATURES, picture_regions
from attnviz.lessons.attention_layer.upward import upward_pull

PAGE = "app_pages/attention_layer.py"
WEIGHT_TOL = 1 / 65534 + 1e-7  # the canvas heatmap sends weights as uint16 (attnviz.draw.heatmap_payload)


def run(query: dict):
    at = run_app(query, page=PAGE)
    assert_healthy(at)
    prose = [e.value for kind in ("markdown", "caption", "error", "warning") for e in getattr(at, kind)]
    assert not [p for p in prose if re.search(r"\{[a-z_]+\}", p)], "a sentence lost its f: " + str(prose)
    return at


def overlay_z(at, key: str, trace: int = 1) -> np.ndarray:
    """The weights a plotly picture figure carries in its veil (heatmap) trace."""
    z = chart_specs(at)[key]["data"][trace]["z"]
    return np.asarray(decode_plotly_array(z) if isinstance(z, dict) else z, dtype=np.float64)


def test_step_a_one_query_numbers_are_attnviz():
    at = run({"al_step": "a", "al_grid": "4x6", "al_query": "house", "al_strength": "7"})
    r = picture_regions(4, 6)
    q = qs.feature_query("house", 7.0)
    one = ly.one_query(r.x, q)
    table = at.dataframe[0].value
    assert list(table.index) == list(FEATURES)
    np.testing.assert_allclose(table["query q"].to_numpy(), q.numpy(), atol=1e-12)
    np.testing.assert_allclose(table["context y"].to_numpy(), one.outputs[0].numpy(), atol=1e-12)
    np.testing.assert_allclose(overlay_z(at, "al_picture").ravel(), one.weights[0].numpy(), atol=1e-9)
    text = page_text(at)
    assert f"the largest weight ({float(one.weights.max()):.3f})" in text
    r255 = [round(float(c) * 255) for c in one.outputs[0, :3]]
    assert f"rgb({r255[0]}, {r255[1]}, {r255[2]})" in "\n".join(str(h.proto.body) for h in at.get("html"))
    assert r"N = H \cdot W = 4 \cdot 6 = 24" in text
    for feature in FEATURES:  # every feature is named and explained on screen
        assert f"**{feature}** = " in text


def test_step_b_many_queries():
    at = run({"al_step": "b", "al_grid": "6x8", "al_strength": "10"})
    r = picture_regions(6, 8)
    many = ly.many_queries(r.x, qs.all_feature_queries(10.0))
    z, rows, cols = drawn_heatmap(at, "al_many_map")
    assert rows == list(qs.PRESETS) and cols == r.labels
    np.testing.assert_allclose(z, many.weights.numpy(), atol=WEIGHT_TOL)
    np.testing.assert_allclose(at.dataframe[0].value.to_numpy(), many.outputs.numpy(), atol=1e-12)
    for i in range(len(qs.PRESETS)):  # each picture's veil is its own query's row
        np.testing.assert_allclose(overlay_z(at, "al_pictures", 2 * i + 1).ravel(), many.weights[i].numpy(), atol=1e-9)
    assert r"\mathbb{R}^{5 \times 48}" in page_text(at)


def test_step_b_with_a_custom_query_adds_a_row():
    at = run({"al_step": "b", "al_query": "custom", "al_qvec": "0, 0, 0, 1, 1", "al_grid": "3x4"})
    z, rows, _ = drawn_heatmap(at, "al_many_map")
    assert rows == [*qs.PRESETS, "custom"]
    r = picture_regions(3, 4)
    q = qs.with_query(qs.all_feature_queries(10.0), qs.feature_query("custom", 10.0, "0, 0, 0, 1, 1"))
    np.testing.assert_allclose(z, ly.many_queries(r.x, q).weights.numpy(), atol=WEIGHT_TOL)


def test_step_c_keys_and_values():
    at = run({"al_step": "c", "al_strength": "12"})
    r = picture_regions(6, 8)
    kv = ly.keys_and_values(r.x, qs.all_key_queries(12.0))
    z, rows, _ = drawn_heatmap(at, "al_kv_map")
    np.testing.assert_allclose(z, kv.weights.numpy(), atol=WEIGHT_TOL)
    frames = [d.value for d in at.dataframe]
    np.testing.assert_allclose(frames[0].to_numpy(), ly.W_K.numpy())
    assert list(frames[0].columns) == list(qs.KEY_FEATURES)
    np.testing.assert_allclose(frames[1].to_numpy(), ly.W_V.numpy())
    np.testing.assert_allclose(frames[2].to_numpy(), kv.outputs.numpy(), atol=1e-12)
    text = page_text(at)
    assert r"\mathbb{R}^{48 \times 4}" in text and r"\mathbb{R}^{48 \times 3}" in text


def test_step_d_self_attention_and_its_permutation_check():
    at = run({"al_step": "d", "al_grid": "4x4", "al_seed": "3", "al_strength": "20"})
    r = picture_regions(4, 4)
    check = ly.permutation_check(r.x, ly.query_weights(20.0), 3)
    z, rows, cols = drawn_heatmap(at, "al_self_map")
    assert rows == r.labels
    np.testing.assert_allclose(z, check.attended.weights.numpy(), atol=WEIGHT_TOL)
    z, rows, _ = drawn_heatmap(at, "al_shuffled_map")
    assert rows == [r.labels[i] for i in check.order.tolist()]
    np.testing.assert_allclose(z, check.attended_shuffled.weights.numpy(), atol=WEIGHT_TOL)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["max |f(P X) − P f(X)|, outputs"] == f"{check.output_difference:.1e}"
    assert metrics["max |A(P X) − P A(X) Pᵀ|, weights"] == f"{check.weight_difference:.1e}"
    assert check.output_difference < 1e-6
    mosaic = chart_specs(at)["al_mosaics"]["data"]
    assert len(mosaic) == 4


def test_the_step_lives_in_the_url():
    at = run({"al_step": "c"})
    assert at.segmented_control(key="al_step").value == "c"
    at.segmented_control(key="al_step").set_value("d").run()
    assert_healthy(at)
    assert at.query_params["al_step"] == ["d"] or at.query_params["al_step"] == "d"
    assert has_metric(at)


def test_two_changes_in_one_rerun_both_reach_the_address():
    """Step b and a 3 × 4 grid arrive in one rerun whose address has neither (the browser's rerun can carry the
    address from before its own write of the grid, and the step's hand-written key then sends the server's copy):
    the address the server leaves holds both, as the controls say (ui/address.py). A CI run ended on ?al_step=b."""
    at = run({})
    at.segmented_control(key="al_step").set_value("b")
    at.text_input(key="al_grid").set_value("3x4")
    at.run()
    assert_healthy(at)
    address = {key: value if isinstance(value, list) else [value] for key, value in at.query_params.items()}
    assert address.get("al_step") == ["b"] and address.get("al_grid") == ["3x4"], address


def has_metric(at) -> bool:
    return any(m.label.startswith("max |f(P X)") for m in at.metric)


@pytest.mark.parametrize(("query", "message"), [
    ({"al_grid": "0x3"}, "A 0 × 3 grid is impossible here"),
    ({"al_grid": "40x40"}, "A 40 × 40 grid is impossible here"),
    ({"al_grid": "big"}, "The grid must be written rows x columns"),
    ({"al_query": "custom", "al_qvec": ""}, "The query is empty"),
    ({"al_query": "custom", "al_qvec": "1, 2"}, "The query has 2 numbers; it needs 5 numbers"),
    ({"al_step": "c", "al_query": "custom", "al_kvec": "1, 2, 3, 4, 5"}, "it needs 4 numbers"),
])
def test_bad_input_gets_a_clear_message(query, message):
    at = run(query)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert at.text_input(key="al_grid") is not None  # the controls stay, to fix it


@pytest.mark.parametrize(("key", "value"), [("al_step", "e"), ("al_query", "moon")])
def test_a_link_value_the_page_does_not_know_is_named(key, value):
    at = run({key: value})
    assert any(f"{key}={value}" in w.value for w in at.warning)
    assert "al_picture" in chart_specs(at)  # and step a is drawn


def test_a_bad_grid_then_a_good_one():
    at = run({"al_grid": "0x0"})
    at.text_input(key="al_grid").input("2x3").run()
    assert_healthy(at)
    assert not at.error
    assert overlay_z(at, "al_picture").shape == (2, 3)


def test_the_page_is_in_the_menus_first_section():
    assert ("app_pages/attention_layer.py", "attention_layer", "Attention as a layer") in app_menu()
    first = next(iter(menu_sections().values()))
    assert first.index("why_attention") < first.index("attention_layer") < first.index("")  # before the explorer


def test_step_a_says_the_captioning_model_scores_with_f_att():
    text = page_text(run({"al_step": "a"}))
    assert "scores each region with f_att(h, z_j), a small neural network, an MLP: additive attention" in text
    assert "the general layer swaps it for the scaled dot product" in text


def test_steps_b_and_c_have_no_query_picker_that_does_nothing():
    """Step b drew a "Query: sun" picker that changed nothing (every preset is a row already): in b and c the one
    choice left is a row of one's own (the "Own query" switch), and turning it on adds that row."""
    for step, key in (("b", "al_many_map"), ("c", "al_kv_map")):
        at = run({"al_step": step, "al_grid": "3x4"})
        assert not [s for s in at.selectbox if s.key == "al_query"]
        assert drawn_heatmap(at, key)[1] == list(qs.PRESETS)
        at.toggle(key="al_add_custom").set_value(True).run()
        assert_healthy(at)
        assert drawn_heatmap(at, key)[1] == [*qs.PRESETS, "custom"]


def test_step_d_says_every_region_leans_up_with_the_layers_own_figures():
    at = run({"al_step": "d", "al_grid": "6x8", "al_strength": "10"})
    r = picture_regions(6, 8)
    check = ly.permutation_check(r.x, ly.query_weights(10.0), 0)
    pull = upward_pull(r, check.attended.weights, check.attended.outputs)
    text = page_text(at)
    assert "point the way its own do" not in text
    assert f"the regions give on average {100 * pull.mean_share:.0f}% of their weight to the top 3 rows" in text
    assert f"even the bottom row's regions give them {100 * pull.bottom_share:.0f}%" in text


def test_step_d_draws_no_query_picker():
    at = run({"al_step": "d", "al_grid": "3x4"})
    assert not [s for s in at.selectbox if s.key == "al_query"] and not [t for t in at.toggle if t.key == "al_add_custom"]
