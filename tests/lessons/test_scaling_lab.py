"""The 1/√d_k lesson: variance grows like d_k, softmax saturates, its Jacobian collapses."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd.functional import jacobian

import attnviz
from attnviz.engine.attention import masked_softmax
from attnviz.errors import AttnvizError
from attnviz.lessons.scaling.experiments import (
    dot_product_variance_experiment,
    entropy_per_layer,
    gradient_experiment,
    softmax_jacobian,
    softmax_jacobian_norm,
    softmax_saturation,
)

D_KS = [4, 16, 64, 256]


# ---- (a) variance ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def variance():
    return dot_product_variance_experiment(D_KS, n_samples=4000, seed=0)


def test_unscaled_variance_is_about_d_k(variance):
    for d_k, var in zip(D_KS, variance.unscaled_variance, strict=True):
        assert var == pytest.approx(d_k, rel=0.15)


def test_scaled_variance_is_about_one(variance):
    for var in variance.scaled_variance:
        assert var == pytest.approx(1.0, rel=0.15)


def test_variance_experiment_shapes_and_consistency(variance):
    assert variance.unscaled.shape == variance.scaled.shape == (len(D_KS), 4000)
    np.testing.assert_allclose(variance.scaled * np.sqrt(np.array(D_KS))[:, None], variance.unscaled)
    np.testing.assert_array_equal(variance.expected_unscaled_variance, D_KS)
    np.testing.assert_allclose(variance.unscaled_variance, variance.unscaled.var(axis=1, ddof=1))


def test_variance_experiment_is_deterministic_in_the_seed():
    a = dot_product_variance_experiment([8], n_samples=100, seed=3)
    b = dot_product_variance_experiment([8], n_samples=100, seed=3)
    c = dot_product_variance_experiment([8], n_samples=100, seed=4)
    np.testing.assert_array_equal(a.unscaled, b.unscaled)
    assert not np.array_equal(a.unscaled, c.unscaled)


@pytest.mark.parametrize("bad", [[], [0], [-4], [2.5], ["x"], [True], 16])
def test_bad_d_k_values_are_clear_errors(bad):
    with pytest.raises(AttnvizError):
        dot_product_variance_experiment(bad, n_samples=10)


def test_whole_floats_from_a_slider_are_accepted():
    result = dot_product_variance_experiment([64.0, np.int64(8)], n_samples=10.0)
    assert result.d_k.tolist() == [64, 8]


# ---- (b) saturation ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saturation():
    return softmax_saturation([1, *D_KS], n_keys=16, n_trials=200, seed=0)


def test_unscaled_max_weight_grows_with_d_k(saturation):
    assert np.all(np.diff(saturation.max_weight_unscaled) > 0)
    assert np.all(np.diff(saturation.entropy_unscaled) < 0)


def test_unscaled_is_more_saturated_than_scaled_at_large_d_k(saturation):
    assert saturation.max_weight_unscaled[-1] > saturation.max_weight_scaled[-1] + 0.3
    assert saturation.entropy_unscaled[-1] < saturation.entropy_scaled[-1] - 1.0


def test_scaled_softmax_does_not_depend_much_on_d_k(saturation):
    assert np.ptp(saturation.entropy_scaled) < 0.2
    assert np.ptp(saturation.max_weight_scaled) < 0.1


def test_at_d_k_one_scaling_changes_nothing(saturation):
    assert saturation.entropy_unscaled[0] == saturation.entropy_scaled[0]
    assert saturation.max_weight_unscaled[0] == saturation.max_weight_scaled[0]


def test_saturation_stays_in_range(saturation):
    for entropy in (saturation.entropy_unscaled, saturation.entropy_scaled):
        assert np.all((entropy >= 0) & (entropy <= saturation.max_entropy + 1e-9))
    for max_weight in (saturation.max_weight_unscaled, saturation.max_weight_scaled):
        assert np.all((max_weight >= 1 / 16) & (max_weight <= 1))


# ---- (c) Jacobian ----------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0, 30.0])
def test_jacobian_closed_form_matches_autograd(scale):
    scores = torch.randn(7, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * scale
    autograd_j = jacobian(lambda s: torch.softmax(s, -1), scores)  # (7, 7)
    torch.testing.assert_close(softmax_jacobian(scores), autograd_j, atol=1e-5, rtol=0)
    assert softmax_jacobian_norm(scores).item() == pytest.approx(torch.linalg.matrix_norm(autograd_j).item(),
                                                                 abs=1e-5)


def test_jacobian_norm_is_batched():
    scores = torch.randn(3, 5, 6, dtype=torch.float64)
    norms = softmax_jacobian_norm(scores)
    assert norms.shape == (3, 5)
    assert norms[2, 4].item() == pytest.approx(softmax_jacobian_norm(scores[2, 4]).item())


def test_jacobian_known_values():
    # two equal scores: a = (1/2, 1/2), J = [[1/4, -1/4], [-1/4, 1/4]], ‖J‖_F = 1/2
    assert softmax_jacobian_norm(torch.zeros(2)).item() == pytest.approx(0.5)
    # one score far above the rest: a one-hot, J = 0: nothing to learn from
    assert softmax_jacobian_norm(torch.tensor([100.0, 0.0, 0.0])).item() == pytest.approx(0.0, abs=1e-12)


def test_unscaled_jacobian_collapses_at_large_d_k():
    result = gradient_experiment([1, *D_KS], n_keys=16, n_trials=200, seed=0)
    assert result.jacobian_norm_unscaled[-1] < result.jacobian_norm_scaled[-1]
    assert result.jacobian_norm_unscaled[-1] < 0.5 * result.jacobian_norm_scaled[-1]
    assert result.jacobian_norm_unscaled[-1] < result.jacobian_norm_unscaled[1]  # falls as d_k grows
    assert np.ptp(result.jacobian_norm_scaled) < 0.1  # scaled: about the same for every d_k


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=12))
def test_jacobian_is_symmetric_rows_sum_to_zero_norm_at_most_half(values):
    scores = torch.tensor(values, dtype=torch.float64)
    j = softmax_jacobian(scores)
    torch.testing.assert_close(j, j.T)
    torch.testing.assert_close(j.sum(-1), torch.zeros(len(values), dtype=torch.float64))  # Σ_i a_i = 1 always
    assert 0.0 <= softmax_jacobian_norm(scores).item() <= 0.5 + 1e-12


# ---- (d) entropy per layer ---------------------------------------------------------------------


def test_entropy_per_layer_known_answer():
    n = 5
    uniform = torch.full((n, n), 1.0 / n)
    attentions = torch.stack([
        torch.stack([uniform, uniform]),
        torch.stack([torch.eye(n), uniform]),
        torch.stack([torch.eye(n), torch.eye(n)]),
    ])  # (L=3, H=2, n, n)
    per_layer = entropy_per_layer(attentions)
    assert per_layer.shape == (3,)
    assert per_layer.tolist() == pytest.approx([math.log(n), math.log(n) / 2, 0.0], abs=1e-6)


def test_entropy_per_layer_ignores_fully_masked_rows():
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[0] = False
    attentions = masked_softmax(torch.zeros(2, 3, 4, 4), mask)  # live rows uniform, row 0 all zeros
    per_layer = entropy_per_layer(attentions)
    assert not per_layer.isnan().any()
    assert per_layer.tolist() == pytest.approx([math.log(4)] * 2, abs=1e-6)


def test_entropy_per_layer_falls_when_scores_are_not_scaled():
    model = attnviz.load_model("toy")
    text = "the quick brown fox jumps over the lazy dog"
    scaled = entropy_per_layer(model.run(text, scale=True).attentions)
    sharper = entropy_per_layer(model.run(text, scale=4.0).attentions)
    assert (sharper < scaled).all()


def test_entropy_per_layer_rejects_wrong_shape():
    with pytest.raises(AttnvizError):
        entropy_per_layer(torch.ones(3, 3))
