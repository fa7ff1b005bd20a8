"""The compare page in Streamlit's AppTest: presets set side B, what it draws equals attnviz, bad sides explain."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
import torch
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, has_heatmap, page_text, run_app
from streamlit.proto.Metric_pb2 import Metric

import attnviz
from attnviz.analysis.compare import compare_patterns
from attnviz.draw.plotting import decode_plotly_array

PAGE = "app_pages/compare.py"
TEXT = "the cat sat on the mat"
TOY = {"model": "toy", "text": TEXT}


@pytest.fixture(scope="module")
def toy():
    return attnviz.load_model("toy")


def drawn(at, which: str) -> np.ndarray:
    """The weights drawn for side 'a' or 'b' (0..1, to the 0.001 the heatmap carries)."""
    return drawn_heatmap(at, f"cmp_heatmap_{which}")[0]


def difference(at) -> np.ndarray:
    return drawn_heatmap(at, "cmp_diff")[0]


def test_page_loads_with_the_bundled_model_and_b_equal_to_a():
    at = run_app(page=PAGE)
    assert_healthy(at)
    assert at.text_area(key="cmp_b_text").value == at.text_area(key="text").value
    assert "same configuration" in page_text(at)
    np.testing.assert_array_equal(drawn(at, "a"), drawn(at, "b"))
    assert np.abs(difference(at)).max() == 0
    b_metrics = [m for m in at.metric if m.label.endswith(", B")]  # no change: "+0.000 vs A" with no arrow up
    assert len(b_metrics) == 2 and all(m.proto.delta == "+0.000 vs A" for m in b_metrics)
    assert {m.proto.direction for m in b_metrics} == {Metric.MetricDirection.NONE}


@pytest.mark.parametrize("preset, widget, value, run_kwargs", [
    ("scaled vs unscaled", "cmp_b_scaled", False, {"scale": False}),
    ("bidirectional vs causal", "cmp_b_mask", "causal", {"mask": "causal"}),
    ("full vs sliding window", "cmp_b_mask", "window", {"mask": "window:2"}),
])
def test_each_preset_changes_side_b_and_its_heatmap(toy, preset, widget, value, run_kwargs):
    at = run_app(TOY, page=PAGE)
    at.segmented_control(key="cmp_preset").set_value(preset).run()
    assert_healthy(at)
    b_widgets = {w.key: w for w in at.get("toggle") + at.get("selectbox") + at.get("slider")}
    assert b_widgets[widget].value == value
    if value == "window":
        assert b_widgets["cmp_b_window"].value == 2
    assert at.text_area(key="cmp_b_text").value == TEXT  # everything else is still A's
    np.testing.assert_allclose(drawn(at, "a"), toy.run(TEXT).attentions[0, 0].numpy(), atol=5e-4 + 1e-7)
    np.testing.assert_allclose(drawn(at, "b"), toy.run(TEXT, **run_kwargs).attentions[0, 0].numpy(), atol=5e-4 + 1e-7)
    assert "B differs from A only in the" in page_text(at)


def test_difference_heatmap_and_kl_bars_equal_attnviz(toy):
    at = run_app({**TOY, "layer": "1", "cmp_head": "1"}, page=PAGE)
    at.segmented_control(key="cmp_preset").set_value("full vs sliding window").run()
    assert_healthy(at)
    a = toy.run(TEXT).attentions[1, 1]
    b = toy.run(TEXT, mask="window:2").attentions[1, 1]
    np.testing.assert_allclose(difference(at), (a - b).numpy(), atol=1e-6)
    _, rows, cols = drawn_heatmap(at, "cmp_diff")
    assert len(rows) == len(cols) == a.shape[0]
    kl = decode_plotly_array(chart_specs(at)["cmp_kl"]["data"][0]["y"])
    comparison = compare_patterns(a, b)
    finite = torch.isfinite(comparison.row_kl)
    assert not finite.all()  # the window forbids keys that full attention uses: those rows are ∞, not 27.6
    np.testing.assert_allclose(kl[finite.numpy()], comparison.row_kl[finite].numpy(), rtol=1e-5)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean KL(A‖B) per row"] == "∞ nats"
    assert "KL(A‖B) = ∞" in page_text(at) and "27.6" not in page_text(at)
    assert metrics["Mean row entropy, B"] == f"{comparison.entropy_b:.3f} nats"
    arrows = {m.label: m.proto.direction for m in at.metric if m.label.endswith(", B")}  # a real change keeps its arrow
    assert Metric.MetricDirection.NONE not in arrows.values(), arrows


def test_b_can_look_at_another_head(toy):
    at = run_app(TOY, page=PAGE)
    at.selectbox(key="cmp_b_head").set_value(1).run()
    assert_healthy(at)
    np.testing.assert_allclose(drawn(at, "b"), toy.run(TEXT).attentions[0, 1].numpy(), atol=5e-4 + 1e-7)
    assert "the head (0 → 1)" in page_text(at)


def test_empty_side_b_text_says_so_and_still_shows_a():
    at = run_app(TOY, page=PAGE)
    at.text_area(key="cmp_b_text").input("").run()
    assert_healthy(at)
    assert any("Side B has nothing to show" in w.value and "text is empty" in w.value for w in at.warning)
    assert has_heatmap(at, "cmp_heatmap_a") and not has_heatmap(at, "cmp_heatmap_b")


def test_different_tokens_warn_and_skip_the_cell_by_cell_difference(toy):
    at = run_app(TOY, page=PAGE)
    at.text_area(key="cmp_b_text").input("a dog ran far away").run()
    assert_healthy(at)
    assert any("different tokens" in w.value and "meaningless" in w.value for w in at.warning)
    assert has_heatmap(at, "cmp_heatmap_a") and has_heatmap(at, "cmp_heatmap_b") and not has_heatmap(at, "cmp_diff")
    metrics = {m.label: m.value for m in at.metric}
    assert "Mean KL(A‖B) per row" not in metrics and "Mean row entropy, B" in metrics
    assert "the text" in page_text(at)


def test_b_follows_the_sidebar_until_edited_and_comes_from_the_url():
    at = run_app(TOY, page=PAGE)
    at.segmented_control(key="cmp_preset").set_value("bidirectional vs causal").run()
    at.text_area(key="text").input("one two three").run()
    assert at.text_area(key="cmp_b_text").value == "one two three"  # untouched B follows A (+ the preset)
    assert at.selectbox(key="cmp_b_mask").value == "causal"
    at.text_area(key="cmp_b_text").input("four five six").run()
    at.text_area(key="text").input("seven eight nine").run()
    assert at.text_area(key="cmp_b_text").value == "four five six"  # an edited B stays
    shared = run_app({**TOY, "cmp_b_text": "x y z", "cmp_b_mask": "window", "cmp_b_window": "1"}, page=PAGE)
    assert_healthy(shared)
    assert shared.text_area(key="cmp_b_text").value == "x y z" and shared.slider(key="cmp_b_window").value == 1


def test_copy_a_into_b_undoes_edits_and_the_preset():
    at = run_app(TOY, page=PAGE)
    at.segmented_control(key="cmp_preset").set_value("scaled vs unscaled").run()
    at.text_area(key="cmp_b_text").input("something else").run()
    at.button(key="cmp_copy").click().run()
    assert_healthy(at)
    assert at.text_area(key="cmp_b_text").value == TEXT and at.toggle(key="cmp_b_scaled").value is True
    assert at.segmented_control(key="cmp_preset").value is None
    assert "same configuration" in page_text(at)
