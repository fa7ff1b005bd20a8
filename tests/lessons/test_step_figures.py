"""attnviz.lessons.step_by_step.figures: shapes, values, the centred colour scale, and −∞ drawn as −∞ (never NaN or a number)."""

import json

import numpy as np
import pytest
import torch

import attnviz
from attnviz.draw.plotting import decode_plotly_array, weights_as_thousandths
from attnviz.lessons.step_by_step.figures import MINUS_INFINITY, frame_head_columns, signed_heatmap, step_figure
from attnviz.lessons.step_by_step.steps import head_steps

TEXT = "The cat sat on the mat."


def sent(fig) -> dict:
    """The figure as the browser receives it (plotly 7 sends arrays as base64 typed arrays)."""
    return json.loads(fig.to_json())


def z_of(trace: dict) -> np.ndarray:
    return decode_plotly_array(trace["z"]).astype(np.float64)


@pytest.fixture(scope="module")
def toy_steps():
    model = attnviz.load_model("toy")
    return head_steps(model, model.run(TEXT, mask="causal", keep=True), 1, 1)


def test_signed_heatmap_carries_the_matrix_on_a_scale_centred_at_zero():
    m = np.array([[1.5, -3.0, 0.25], [0.0, 2.0, -1.0]], dtype=np.float32)
    trace = sent(signed_heatmap(m, ["a", "b"], None, "M", show_values=True))["data"][0]
    np.testing.assert_allclose(z_of(trace), m)
    assert trace["zmid"] == 0 and trace["zmin"] == -3.0 and trace["zmax"] == 3.0
    assert trace["texttemplate"] == "%{z:.2f}" and trace["y"] == ["a", "b"]
    quiet = sent(signed_heatmap(m, ["a", "b"], None, "M"))["data"][0]
    assert "texttemplate" not in quiet


def test_minus_infinity_cells_are_grey_and_read_minus_infinity():
    m = np.array([[0.5, -np.inf], [1.0, -2.0]], dtype=np.float32)
    data = sent(signed_heatmap(m, ["q0", "q1"], ["k0", "k1"], "S″"))["data"]
    assert len(data) == 2
    values, masked = data
    z = z_of(values)
    assert np.isnan(z[0, 1]) and values["hoverongaps"] is False  # a gap: no colour, no hover, no number
    np.testing.assert_allclose(z[[0, 1, 1], [0, 0, 1]], [0.5, 1.0, -2.0])
    assert masked["text"] == [["", MINUS_INFINITY], ["", ""]] and masked["texttemplate"] == "%{text}"
    assert "−∞" in masked["hovertemplate"] and masked["showscale"] is False
    assert values["zmin"] == -2.0  # the colour scale ignores -inf


def test_no_minus_infinity_means_no_grey_trace():
    assert len(signed_heatmap(np.eye(2), ["a", "b"], ["a", "b"], "S").data) == 1


@pytest.mark.parametrize("key,attr", [("x", "x"), ("Q", "q"), ("K", "k"), ("V", "v"), ("scores", "scores"),
                                      ("scaled", "scaled"), ("head", "head_out"), ("concat", "concat"),
                                      ("out", "attn_out")])
def test_each_step_figure_shows_that_steps_matrix(toy_steps, key, attr):
    expected = getattr(toy_steps, attr).numpy()
    trace = sent(step_figure(toy_steps, key, show_values=True))["data"][0]
    z = z_of(trace)
    assert z.shape == expected.shape
    np.testing.assert_allclose(z, expected, atol=1e-6)
    assert trace["texttemplate"] == "%{z:.2f}"  # the toy model prints its numbers in the cells


def test_masked_step_and_weights_figures(toy_steps):
    n = len(toy_steps.labels)
    masked = sent(step_figure(toy_steps, "masked"))["data"]
    forbidden = ~np.tril(np.ones((n, n), dtype=bool))
    assert np.array_equal(np.isnan(z_of(masked[0])), forbidden)
    assert np.array_equal(np.array(masked[1]["text"]) == MINUS_INFINITY, forbidden)
    weights = sent(step_figure(toy_steps, "weights"))["data"][0]
    np.testing.assert_array_equal(z_of(weights), weights_as_thousandths(toy_steps.weights))  # the shared 0..1 axis
    assert weights["coloraxis"] == "coloraxis"


def test_concat_frames_the_chosen_heads_columns(toy_steps):
    shapes = sent(step_figure(toy_steps, "concat"))["layout"]["shapes"]
    frame = [s for s in shapes if s["type"] == "rect"]
    assert len(frame) == 1 and (frame[0]["x0"], frame[0]["x1"]) == (3.5, 7.5)  # head 1 of 2, d_head 4
    lines = frame_head_columns(signed_heatmap(torch.zeros(2, 12).numpy(), ["a", "b"], None, "C"), 0, 4, 3)
    assert [s.x0 for s in lines.layout.shapes if s.type == "line"] == [3.5, 7.5]


def test_square_numbers_stop_when_the_text_is_long():
    model = attnviz.load_model("toy")
    long_steps = head_steps(model, model.run(" ".join(["word"] * 20), keep=True), 0, 0)
    assert "texttemplate" not in sent(step_figure(long_steps, "scores", show_values=True))["data"][0]
    assert "texttemplate" in sent(step_figure(long_steps, "Q", show_values=True))["data"][0]


def test_scores_scaled_and_masked_share_one_colour_range(toy_steps):
    ranges = {key: sent(step_figure(toy_steps, key))["data"][0] for key in ("scores", "scaled", "masked")}
    limits = {(t["zmin"], t["zmax"]) for t in ranges.values()}
    assert len(limits) == 1  # the same ±range on all three, so scaling by 1/√d_k visibly pales the map
    (low, high), = limits
    assert high == -low == pytest.approx(float(np.abs(toy_steps.scores).max()), rel=1e-5)


def test_input_colours_are_clipped_at_the_99th_percentile_but_hover_keeps_true_values():
    x = np.ones((4, 50), dtype=np.float32)
    x[0, 0] = 100.0  # one outlier feature, as real models have
    fig = sent(signed_heatmap(x, list("abcd"), None, "X", limit=float(np.percentile(np.abs(x), 99))))
    assert fig["data"][0]["zmax"] < 100 and z_of(fig["data"][0]).max() == 100


def test_the_input_step_says_its_colours_are_clipped(toy_steps):
    title = sent(step_figure(toy_steps, "x"))["layout"]["title"]["text"]
    assert "99th percentile" in title


@pytest.mark.parametrize("key,attr", [("x", "x"), ("Q", "q"), ("K", "k"), ("V", "v"), ("scores", "scores"),
                                      ("scaled", "scaled"), ("masked", "masked_scores"), ("weights", "weights"),
                                      ("head", "head_out"), ("concat", "concat"), ("out", "attn_out")])
def test_step_matrix_hands_the_page_that_steps_numbers(toy_steps, key, attr):
    from attnviz.lessons.step_by_step.figures import step_matrix

    m = step_matrix(toy_steps, key, show_values=True)
    np.testing.assert_array_equal(m.matrix, getattr(toy_steps, attr).numpy())  # -inf stays -inf (S″)
    assert m.kind == ("weights" if key == "weights" else "signed") and m.row_labels == toy_steps.labels
    if key in ("scores", "scaled", "masked"):  # one colour range for S, S′ and S″
        assert m.limit == step_matrix(toy_steps, "scores").limit == step_matrix(toy_steps, "masked").limit
