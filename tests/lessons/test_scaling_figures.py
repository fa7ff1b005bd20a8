"""The scaling lab's figures draw the experiments' own numbers; the LaTeX carries them."""

import json
import math

import numpy as np
import pytest

from attnviz.draw.plotting import decode_plotly_array
from attnviz.errors import AttnvizError
from attnviz.lessons.scaling import figures as sf
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment, gradient_experiment, softmax_saturation
from attnviz.lessons.scaling.figures import FACTOR_STEPS, factor_from_url

D_KS = (1, 4, 16, 64)


@pytest.fixture(scope="module")
def variance():
    return dot_product_variance_experiment(D_KS, n_samples=2000)


def traces(fig) -> dict[str, dict]:
    return {t["name"]: t for t in json.loads(fig.to_json())["data"] if t.get("name")}


def y_of(trace) -> np.ndarray:
    return decode_plotly_array(trace["y"]).astype(float)


def test_shared_histograms_are_densities_on_the_same_bins():
    rng = np.random.default_rng(0)
    wide, narrow = rng.normal(0, 8, 5000), rng.normal(0, 1, 5000)
    centres, dens_wide, dens_narrow, width = sf.shared_histograms(wide, narrow)
    assert len(centres) == sf.HISTOGRAM_BINS
    assert (dens_wide * width).sum() == pytest.approx(1.0, abs=0.01)
    assert (dens_narrow * width).sum() == pytest.approx(1.0, abs=0.01)
    assert dens_narrow.max() > 4 * dens_wide.max()  # the narrow one piles up in fewer bins


def test_histogram_figure_shows_the_unscaled_spread_wider(variance):
    bars = traces(sf.dot_product_histogram_figure(variance, 64))
    unscaled, scaled = bars["q·k (unscaled)"], bars["q·k / √d_k (scaled)"]
    x = decode_plotly_array(unscaled["x"]).astype(float)
    spread = lambda t: math.sqrt((y_of(t) * x**2).sum() / y_of(t).sum())  # rms of the density
    assert spread(unscaled) == pytest.approx(8.0, rel=0.15)  # √64
    assert spread(scaled) == pytest.approx(1.0, rel=0.25)  # coarse bins widen it a little


def test_variance_figure_draws_the_measured_variances(variance):
    lines = traces(sf.variance_figure(variance, highlight=16))
    np.testing.assert_allclose(y_of(lines["measured Var(q·k)"]), variance.unscaled_variance, rtol=1e-6)
    np.testing.assert_allclose(y_of(lines["measured Var(q·k/√d_k)"]), variance.scaled_variance, rtol=1e-6)
    np.testing.assert_allclose(y_of(lines["theory: d_k"]), D_KS)
    ring = lines["d_k = 16"]
    assert decode_plotly_array(ring["x"]).tolist() == [16, 16]


def test_the_variance_axes_label_the_top_and_stay_level():
    """On the lab's grid (1 to 512) the variance axis is labelled up to 512 (its decades stopped at 100, under a line
    that rises to 512), and the d_k axis labels four values, level: its ten, turned upright in a projector's narrow
    column beside the class's answers, ran into the legend under the axis."""
    exp = dot_product_variance_experiment(sf.D_K_GRID, n_samples=200)
    lay = sf.variance_figure(exp, highlight=512).layout
    assert list(lay.yaxis.tickvals) == [1, 8, 64, 512] == [int(t) for t in lay.yaxis.ticktext]
    assert list(lay.xaxis.tickvals) == [1, 8, 64, 512] and lay.xaxis.tickangle == 0
    assert list(lay.xaxis.minor.tickvals) == list(sf.D_K_GRID) and lay.xaxis.minor.showgrid  # each d_k: a line


def test_a_d_k_outside_the_experiment_is_a_clear_error(variance):
    with pytest.raises(AttnvizError, match="d_k = 3"):
        sf.dot_product_histogram_figure(variance, 3)


def test_saturation_and_gradient_figures_draw_the_experiments():
    sat = softmax_saturation(D_KS, n_trials=50)
    lines = json.loads(sf.saturation_figure(sat, highlight=4).to_json())["data"]
    entropy_unscaled = next(t for t in lines if t["name"].startswith("unscaled") and t["xaxis"] == "x")
    max_scaled = next(t for t in lines if t["name"].startswith("scaled") and t["xaxis"] == "x2")
    np.testing.assert_allclose(y_of(entropy_unscaled), sat.entropy_unscaled, rtol=1e-6)
    np.testing.assert_allclose(y_of(max_scaled), sat.max_weight_scaled, rtol=1e-6)

    grad = gradient_experiment(D_KS, n_trials=50)
    lines = traces(sf.gradient_figure(grad, highlight=64))
    np.testing.assert_allclose(y_of(lines["unscaled: J at q·k"]), grad.jacobian_norm_unscaled, rtol=1e-6)
    np.testing.assert_allclose(y_of(lines["scaled: J at q·k/√d_k"]), grad.jacobian_norm_scaled, rtol=1e-6)


def test_latex_carries_the_numbers():
    tex = sf.variance_latex(64, 63.21, 0.987)
    assert "= 64" in tex and "63.21" in tex and "0.987" in tex
    assert r"\sqrt{32}" in sf.factor_latex(2.0, 32) and "0.3536" in sf.factor_latex(2.0, 32)
    assert r"\ln 16" in sf.entropy_latex(16)
    assert r"\mathrm{diag}(p)" in sf.jacobian_latex()


def test_factor_scale_is_factor_times_the_trained_scale():
    assert sf.factor_scale(1.0, 64) == 1 / math.sqrt(64)
    assert sf.factor_scale(4.0, 32) == pytest.approx(4 / math.sqrt(32))
    assert 1.0 in sf.FACTOR_STEPS and min(sf.FACTOR_STEPS) == 0.25 and max(sf.FACTOR_STEPS) == 8
    with pytest.raises(AttnvizError):
        sf.factor_scale(0.0, 64)


def test_entropy_per_layer_figure():
    lines = traces(sf.entropy_per_layer_figure([0.5, 0.4], [1.5, 1.2], 4.0, n_tokens=10))
    np.testing.assert_allclose(y_of(lines["×4"]), [0.5, 0.4])
    np.testing.assert_allclose(y_of(lines["trained (×1)"]), [1.5, 1.2])
    with pytest.raises(AttnvizError, match="different lengths"):
        sf.entropy_per_layer_figure([1.0], [1.0, 2.0], 2.0, n_tokens=4)


def test_a_link_factor_is_read_however_it_is_spelled():
    assert factor_from_url("4.0") == 4.0 and factor_from_url("4") == 4.0 and factor_from_url(" 4.00 ") == 4.0
    assert factor_from_url("0.50") == 0.5 and factor_from_url(["1", "2.830"]) == 2.83
    assert factor_from_url("3") is None and factor_from_url("abc") is None and factor_from_url(None) is None
    assert all(factor_from_url(f"{f:.4f}") == f for f in FACTOR_STEPS)
