"""The step-by-step page: loads, its controls change the numbers, and the numbers are attnviz's."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import re

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_heatmap, page_text, run_app
from streamlit.testing.v1 import AppTest

import attnviz
from attnviz.lessons.step_by_step.steps import head_steps, output_projection_gap

PAGE = "app_pages/step_by_step.py"
APP = os.path.join(os.path.dirname(__file__), "..", "..", "app.py")
TEXT = "The cat sat on the mat."  # toy tokens: [CLS] the cat sat on the mat . [SEP]
NUMBER = r"(-?\d+(?:\.\d+)?)(?:\\times10\^\{(-?\d+)\})?"


def last_number(latex: str) -> float:
    mantissa, exponent = re.findall(NUMBER, latex)[-1]
    return float(mantissa) * 10 ** int(exponent or 0)


def latex_with(at: AppTest, marker: str) -> str:
    """The first st.latex on the page containing marker, without the $$ that st.latex wraps it in."""
    found = [el.value.strip("$\n") for el in at.latex if marker in el.value]
    assert found, f"no LaTeX containing {marker!r}"
    return found[0]


def drawn(at: AppTest, key: str) -> np.ndarray:
    """The matrix ui/heatmap_widget drew under this key, as drawn (-inf where masked)."""
    return drawn_heatmap(at, key)[0]


def open_page(model: str = "toy", text: str = TEXT, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["model"] = model
    at.session_state["text"] = text
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert_healthy(at)  # no exception, no NaN in any text on the page
    return at


@pytest.fixture(scope="module")
def toy():
    return attnviz.load_model("toy")


def toy_steps(toy, mask="none", scale=True, layer=0, head=0):
    return head_steps(toy, toy.run(TEXT, mask=mask, scale=scale, keep=True), layer, head)


def test_loads_with_defaults_and_shows_the_bundled_models_numbers():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    assert_healthy(at)
    assert not at.error
    for key in ("x", "Q", "K", "V", "scores", "scaled", "masked", "weights", "head", "concat", "out"):
        assert drawn(at, f"sbs_fig_{key}").size  # every step's matrix is drawn through the one heatmap call
    model = attnviz.load_model()
    res = model.run(at.text_area(key="text").value, keep=True)
    steps = head_steps(model, res, 0, 0)
    dot = latex_with(at, r"q_{2} \cdot k_{1} &=")
    assert last_number(dot) == pytest.approx(float(steps.q[2] @ steps.k[1]), abs=1e-3)
    assert r"26\text{ more terms}" in dot  # d_head 32: the six largest terms, the rest summed
    assert any("only the 6 largest products" in c.value for c in at.caption)
    assert r"(n \times d_{head}) = (" in latex_with(at, r"d_{head}) = (")
    np.testing.assert_allclose(drawn(at, "sbs_fig_Q"), steps.q.numpy(), atol=1e-6)
    assert any("LayerNorm(token + position + segment embeddings)" in m.value for m in at.markdown)  # BERT's X


def test_query_and_key_choice_change_the_numbers_to_attnviz_ones(toy):
    at = open_page()
    before = last_number(latex_with(at, r"q_{2} \cdot k_{1} &="))
    at.selectbox(key="sbs_query").set_value(5)
    at.selectbox(key="sbs_key").set_value(3)
    at.run()
    assert not at.exception
    dot = latex_with(at, r"q_{5} \cdot k_{3} &=")
    assert underbraced(dot) == [0, 1, 2, 3]  # the toy model: every term written out
    steps = toy_steps(toy)
    assert last_number(dot) == pytest.approx(float(steps.q[5] @ steps.k[3]), abs=1e-3)
    assert last_number(dot) != pytest.approx(before, abs=1e-3)
    weight = latex_with(at, r"A_{5,3} = \frac")
    assert last_number(weight) == pytest.approx(float(steps.weights[5, 3]), abs=1e-3)


def underbraced(latex: str) -> list[int]:
    return [int(m) for m in re.findall(r"\}_\{m=(\d+)\}", latex)]


def test_switching_scaling_off_makes_the_scaled_value_the_dot_product(toy):
    at = open_page()
    dot = last_number(latex_with(at, r"q_{2} \cdot k_{1} &="))
    assert last_number(latex_with(at, "S'_{2,1} =")) == pytest.approx(dot / 2, abs=1e-3)  # ÷ √4
    at.toggle(key="scaled").set_value(False).run()
    assert not at.exception
    off = latex_with(at, "S'_{2,1} =")
    assert "scaling off" in off
    assert last_number(off) == pytest.approx(last_number(latex_with(at, r"q_{2} \cdot k_{1} &=")), abs=1e-3)
    steps = toy_steps(toy, scale=False)
    assert last_number(off) == pytest.approx(float(steps.q[2] @ steps.k[1]), abs=1e-3)


def test_causal_mask_with_the_key_after_the_query_gives_minus_infinity_and_weight_zero():
    at = open_page(mask="causal", sbs_query=2, sbs_key=5)
    assert latex_with(at, "M_{2,5} =").startswith(r"M_{2,5} = -\infty")
    assert last_number(latex_with(at, r"A_{2,5} = \frac")) == 0.0
    masked = drawn(at, "sbs_fig_masked")
    assert masked[2, 5] == -np.inf and np.isfinite(masked[5, 2])
    assert not any("nan" in el.value.lower() for el in at.latex)
    at.selectbox(key="sbs_key").set_value(1).run()  # a key before the query: allowed again
    assert latex_with(at, "M_{2,1} =").startswith(r"M_{2,1} = 0")
    assert last_number(latex_with(at, r"A_{2,1} = \frac")) > 0


def test_a_query_the_shortened_text_lacks_moves_to_the_default_with_a_message():
    at = open_page(text="one two three four five six seven eight nine ten eleven twelve")
    at.selectbox(key="sbs_query").set_value(12).run()
    assert latex_with(at, r"q_{12} \cdot k_{1}")
    at.text_area(key="text").set_value("a cat").run()  # [CLS] a cat [SEP]: 4 tokens, no "twelve", no "one"
    assert not at.exception and not at.error
    assert any("query token “twelve” (12) is not in the new text" in w.value for w in at.info)
    assert at.selectbox(key="sbs_query").value == 2
    assert latex_with(at, r"q_{2} \cdot k_{1} &=")


def test_the_head_choice_switches_every_matrix_to_that_head(toy):
    at = open_page()
    at.selectbox(key="sbs_head").set_value(1).run()
    assert not at.exception
    for key, attr in (("sbs_fig_Q", "q"), ("sbs_fig_head", "head_out")):
        z = drawn(at, key)
        np.testing.assert_allclose(z, getattr(toy_steps(toy, head=1), attr).numpy(), atol=1e-6)
        assert not np.allclose(z, getattr(toy_steps(toy, head=0), attr).numpy(), atol=1e-3)
    assert latex_with(at, r"W_Q^{(1)}")


def test_concat_w_o_equals_the_sum_over_heads_on_screen():
    at = open_page()
    gap = latex_with(at, r"\max_c \Big|")
    assert last_number(gap) < 1e-5
    assert any("float32 rounding" in c.value for c in at.caption)


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_a_rope_model_shows_q_and_k_before_and_after_rope_and_its_shared_kv_head(tiny_decoder_folder, name):
    folder, text = str(tiny_decoder_folder(name)), "the cat sat on the mat"
    at = run_app({"model": "other", "model_path": folder, "text": text, "layer": "1", "sbs_head": "3"}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    model = attnviz.load_model(folder)
    steps = head_steps(model, model.run(text, keep=True), 1, 3)
    r = model.n_heads // model.n_kv_heads
    assert steps.kv_head == 3 // r
    for key, matrix in (("sbs_fig_Q_before", steps.q_before), ("sbs_fig_Q_after", steps.q),
                        ("sbs_fig_K_before", steps.k_before), ("sbs_fig_K_after", steps.k), ("sbs_fig_V", steps.v),
                        ("sbs_fig_scores", steps.scores)):
        np.testing.assert_allclose(drawn(at, key), matrix.numpy(), atol=1e-5)
    assert any(sub.value.endswith("RoPE: Q and K turned by position") for sub in at.subheader)
    assert f"query head 3 reads K/V head 3 // {r} = {3 // r}" in page_text(at)
    dot = latex_with(at, r"q_{2} \cdot k_{1} &=")
    assert last_number(dot) == pytest.approx(float(steps.q[2] @ steps.k[1]), abs=1e-3)
    assert any("q′ and k′ are after RoPE" in c.value for c in at.caption)

    gap = output_projection_gap(steps, 2)[2]
    assert last_number(latex_with(at, r"\max_c")) == pytest.approx(gap, rel=1e-2, abs=1e-12) and gap < 1e-5
