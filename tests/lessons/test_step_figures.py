"""attnviz.lessons.step_by_step.figures: shapes, values, the centred colour scale, and −∞ drawn as −∞ (never NaN or a number)."""

import numpy as np
import pytest

import attnviz
from attnviz.lessons.step_by_step.figures import step_matrix
from attnviz.lessons.step_by_step.steps import head_steps

TEXT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def toy_steps():
    model = attnviz.load_model("toy")
    return head_steps(model, model.run(TEXT, mask="causal", keep=True), 1, 1)


def test_scores_scaled_and_masked_share_one_colour_range(toy_steps):
    limits = {step_matrix(toy_steps, key).limit for key in ("scores", "scaled", "masked")}
    assert len(limits) == 1  # the same ±range on all three, so scaling by 1/√d_k visibly pales the map
    assert limits.pop() == pytest.approx(float(toy_steps.scores.abs().max()), rel=1e-5)


def test_input_colours_are_clipped_at_the_99th_percentile_and_the_title_says_so(toy_steps):
    m = step_matrix(toy_steps, "x")
    assert m.limit == pytest.approx(float(np.percentile(np.abs(toy_steps.x.numpy()), 99)), rel=1e-5)
    assert m.limit < float(np.abs(toy_steps.x.numpy()).max()) and "99th percentile" in m.title
    np.testing.assert_array_equal(m.matrix, toy_steps.x.numpy())  # the numbers themselves are not clipped


def test_square_numbers_stop_when_the_text_is_long():
    model = attnviz.load_model("toy")
    long_steps = head_steps(model, model.run(" ".join(["word"] * 20), keep=True), 0, 0)
    assert not step_matrix(long_steps, "scores", show_values=True).show_values  # 22 × 22: no room in the cells
    assert step_matrix(long_steps, "Q", show_values=True).show_values  # 22 × d_head still has room


@pytest.mark.parametrize("key,attr", [("x", "x"), ("Q", "q"), ("K", "k"), ("V", "v"), ("scores", "scores"),
                                      ("scaled", "scaled"), ("masked", "masked_scores"), ("weights", "weights"),
                                      ("head", "head_out"), ("concat", "concat"), ("out", "attn_out")])
def test_step_matrix_hands_the_page_that_steps_numbers(toy_steps, key, attr):
    m = step_matrix(toy_steps, key, show_values=True)
    np.testing.assert_array_equal(m.matrix, getattr(toy_steps, attr).numpy())  # -inf stays -inf (S″)
    assert m.kind == ("weights" if key == "weights" else "signed") and m.row_labels == toy_steps.labels
    if key in ("scores", "scaled", "masked"):  # one colour range for S, S′ and S″
        assert m.limit == step_matrix(toy_steps, "scores").limit == step_matrix(toy_steps, "masked").limit
