"""The scaling lab in Streamlit's AppTest: the numbers on screen are attnviz's, and every control moves them."""

import math
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, has_heatmap, run_app

from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment, entropy_per_layer
from attnviz.lessons.scaling.figures import D_K_GRID

PAGE = "app_pages/scaling.py"


def metrics(at) -> dict[str, float]:
    return {m.label: float(m.value.lstrip("±")) for m in at.metric}


def line(spec: dict, name: str) -> np.ndarray:
    trace = next(t for t in spec["data"] if t.get("name") == name)
    return decode_plotly_array(trace["y"]).astype(float)


ATOL = 0.5 / 65534 + 1e-7  # the head's weights travel as uint16: to half a step of 1/65534


def drawn_head(at) -> np.ndarray:
    return drawn_heatmap(at, "scale_head_map")[0]


def test_loads_with_the_variance_experiment_on_screen(minilm):
    at = run_app(page=PAGE)
    assert_healthy(at)
    shown = metrics(at)
    assert shown["d_k"] == 64
    assert shown["Var(q·k)"] == pytest.approx(64, rel=0.1)
    assert shown["Var(q·k/√d_k)"] == pytest.approx(1, abs=0.1)
    variance = chart_specs(at)["scale_variance"]
    unscaled, scaled = line(variance, "measured Var(q·k)"), line(variance, "measured Var(q·k/√d_k)")
    expected = dot_product_variance_experiment(D_K_GRID)
    np.testing.assert_allclose(unscaled, expected.unscaled_variance, rtol=1e-6)
    assert np.all(np.diff(unscaled) > 0)  # grows with d_k ...
    np.testing.assert_allclose(unscaled / np.array(D_K_GRID), 1, rtol=0.1)  # ... like d_k
    np.testing.assert_allclose(scaled, 1, atol=0.1)  # scaled stays near 1
    # part 4 at factor 1 is the model as trained
    res = minilm.run(at.text_area(key="text").value)
    np.testing.assert_allclose(drawn_head(at), res.attentions[0, 0].numpy(), atol=ATOL)


def test_the_d_k_slider_moves_the_numbers_and_the_rings():
    at = run_app(page=PAGE)
    at.select_slider(key="scale_dk").set_value(256).run()
    assert_healthy(at)
    shown = metrics(at)
    assert shown["d_k"] == 256
    assert shown["Var(q·k)"] == pytest.approx(256, rel=0.1)
    assert shown["Var(q·k/√d_k)"] == pytest.approx(1, abs=0.1)
    specs = chart_specs(at)
    ring = next(t for t in specs["scale_variance"]["data"] if t["name"].startswith("d_k ="))
    assert decode_plotly_array(ring["x"]).tolist() == [256, 256]
    assert "d_k = 256" in specs["scale_hist"]["layout"]["title"]["text"]


def test_the_factor_slider_reruns_the_model_at_factor_over_sqrt_d_k(minilm):
    at = run_app(page=PAGE)
    default = drawn_head(at)
    at.select_slider(key="scale_factor").set_value(4.0).run()
    assert_healthy(at)
    text = at.text_area(key="text").value
    res = minilm.run(text, scale=4.0 / math.sqrt(minilm.d_head))
    sharp = drawn_head(at)
    np.testing.assert_allclose(sharp, res.attentions[0, 0].numpy(), atol=ATOL)
    assert not np.array_equal(sharp, default)
    entropy = chart_specs(at)["scale_entropy"]
    np.testing.assert_allclose(line(entropy, "×4"), entropy_per_layer(res.attentions).numpy(), rtol=1e-5)
    np.testing.assert_allclose(line(entropy, "trained (×1)"), entropy_per_layer(minilm.run(text).attentions).numpy(),
                               rtol=1e-5)
    assert line(entropy, "×4").mean() < line(entropy, "trained (×1)").mean()  # sharper rows


def test_url_restores_factor_d_k_layer_and_head(toy):
    at = run_app({"model": "toy", "text": "red green blue", "scale_dk": "16", "scale_factor": "0.25",
                  "layer": "1", "scale_head": "1"}, page=PAGE)
    assert_healthy(at)
    assert metrics(at)["d_k"] == 16
    res = toy.run("red green blue", scale=0.25 / math.sqrt(toy.d_head))
    np.testing.assert_allclose(drawn_head(at), res.attentions[1, 1].numpy(), atol=ATOL)


def test_empty_text_keeps_the_experiments_and_explains(toy):
    at = run_app({"model": "toy"}, page=PAGE)
    at.text_area(key="text").input("").run()
    assert not at.exception
    assert any("empty" in w.value for w in at.warning)
    assert "scale_variance" in chart_specs(at) and not has_heatmap(at, "scale_head_map")
