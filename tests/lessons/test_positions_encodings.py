"""Sinusoidal and learned position tables, and how their dot products depend on the distance."""

import math

import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError
from attnviz.lessons.positions.encodings import (
    distance_profile,
    learned_positions_source,
    learned_table,
    position_dot_products,
    profile_sentence,
    sinusoidal_table,
)


@pytest.mark.parametrize(("n", "d"), [(16, 8), (64, 64), (128, 512)])
def test_sinusoidal_dot_products_depend_on_the_distance_only(n, d):
    gram = position_dot_products(sinusoidal_table(n, d))
    prof = distance_profile(gram)
    assert prof.max_spread < 1e-4 * d  # float32 rounding of sums of d/2 cosines
    for i, j in [(0, 5), (7, 12), (n - 6, n - 1)]:  # same distance 5, three different places
        assert abs(float(gram[i, j]) - float(prof.mean[5])) < 1e-4 * d


def test_sinusoidal_dot_product_equals_the_sum_of_cosines_of_the_distance():
    n, d = 20, 16
    gram = position_dot_products(sinusoidal_table(n, d))
    omega = [10000 ** (-2 * k / d) for k in range(d // 2)]
    for i, j in [(0, 0), (3, 11), (19, 2)]:
        expected = sum(math.cos((i - j) * w) for w in omega)  # Σ_k cos((i−j) ω_k), in float64
        assert abs(float(gram[i, j]) - expected) < 1e-4
    assert abs(float(gram[4, 4]) - d / 2) < 1e-5  # sin² + cos² = 1 for each of the d/2 frequencies


def test_distance_profile_of_a_hand_matrix():
    g = torch.tensor([[4.0, 1.0, 0.0], [1.0, 6.0, 3.0], [0.0, 3.0, 5.0]])
    prof = distance_profile(g)
    assert prof.mean.tolist() == pytest.approx([5.0, 2.0, 0.0])
    assert prof.low.tolist() == [4.0, 1.0, 0.0] and prof.high.tolist() == [6.0, 3.0, 0.0]
    assert prof.spread.tolist() == [2.0, 2.0, 0.0] and prof.n_pairs.tolist() == [3, 2, 1]
    assert prof.max_spread == 2.0 and prof.widest_distance == 0
    assert prof.value_range == 5.0


def test_a_random_table_is_not_distance_only():
    table = torch.randn(16, 32, generator=torch.Generator().manual_seed(0))
    assert distance_profile(position_dot_products(table)).max_spread > 1.0


def test_learned_table_is_the_models_own_rows(minilm):
    assert torch.equal(learned_table(minilm, 10), minilm.embedder.position[:10].cpu())
    assert torch.equal(learned_table(minilm, 10, first=1), minilm.embedder.position[1:11].cpu())
    assert learned_table(minilm, 512).shape == (512, 384)


def test_learned_minilm_positions_are_not_a_function_of_the_distance(minilm):
    prof = distance_profile(position_dot_products(learned_table(minilm, 64, first=1)))
    assert float(prof.spread[1:].max()) > 0.01  # unlike sinusoids (≈ 1e-5): pairs Δ apart do not agree exactly
    assert float(prof.mean[1]) > float(prof.mean[20])  # but neighbours are more alike on average than far pairs


def test_which_learned_table_to_show(minilm, toy):
    assert learned_positions_source(minilm)[0] is minilm
    source, label = learned_positions_source(toy)
    assert source is None and "bundled" in label


@pytest.mark.parametrize(("n", "d"), [(1, 8), (600, 8), (8, 7), (8, 0), (8, 2000), ("8", 8)])
def test_bad_sinusoidal_sizes_are_clear_errors(n, d):
    with pytest.raises(AttnvizError):
        sinusoidal_table(n, d)


def test_bad_learned_requests_are_clear_errors(minilm):
    with pytest.raises(AttnvizError, match="learned positions"):
        learned_table(minilm, 513)
    with pytest.raises(AttnvizError, match="learned positions"):
        learned_table(minilm, 512, first=1)
    with pytest.raises(AttnvizError, match="no position"):
        learned_table(attnviz.load_model("toy", positions=False), 8)


def test_profile_sentence_reports_the_measured_numbers():
    prof = distance_profile(position_dot_products(sinusoidal_table(32, 16)))
    text = profile_sentence(prof, "Sinusoidal")
    assert f"{float(prof.mean[1]):.3g}" in text and f"{prof.value_range:.3g}" in text and "Δ = 10" in text


def test_a_bart_models_learned_positions_start_past_its_offset(tiny_model_folder):
    bart = attnviz.load_model(str(tiny_model_folder("bart")))
    assert learned_positions_source(bart)[0] is bart
    offset = bart.embedder.position_offset
    assert offset == 2  # BART numbers positions from 2
    assert torch.equal(learned_table(bart, 5), bart.embedder.position[offset : offset + 5].cpu())
