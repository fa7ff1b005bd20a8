"""The induction-heads page in AppTest: the score maps, the two best heads and the loss are attnviz's own numbers."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

from attnviz.lessons.induction.probe import probe, random_repeated_ids, text_twice_ids

PAGE = "app_pages/induction.py"
DRAWN = 0.0005 + 1e-7  # weights travel as thousandths


@pytest.fixture(scope="module")
def default_page():
    return run_app({"model": "tiny-llama"}, page=PAGE)


def expected(tiny_llama, half=20, seed=0):
    ids, first = random_repeated_ids(tiny_llama, half, seed)
    return probe(tiny_llama, ids, half, first)


def test_score_maps_and_best_heads_are_attnvizs(default_page, tiny_llama):
    at = default_page
    assert_healthy(at)
    p = expected(tiny_llama)
    prev, rows, cols = drawn_heatmap(at, "ih_prev_map")
    ind, _, _ = drawn_heatmap(at, "ih_ind_map")
    assert rows == [f"layer {i}" for i in range(tiny_llama.n_layers)] and cols == [f"head {h}" for h in range(tiny_llama.n_heads)]
    np.testing.assert_allclose(prev, p.previous.numpy(), atol=1e-6)  # signed maps carry the exact float32 values
    np.testing.assert_allclose(ind, p.induction.numpy(), atol=1e-6)
    (pl, ph), (il, ih) = p.best_previous, p.best_induction
    shown, labels, _ = drawn_heatmap(at, "ih_ind_head")
    np.testing.assert_allclose(shown, p.attentions[il, ih].numpy(), atol=DRAWN)
    assert labels == p.labels
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Best induction head"] == f"layer {il}, head {ih}"
    assert metrics["Best previous-token head"] == f"layer {pl}, head {ph}"
    first, second = p.copy_losses()
    assert metrics["Mean loss, second copy"] == f"{second:.2f} nats"
    assert metrics["Mean loss, first copy"] == f"{first:.2f} nats"
    assert second < first  # the trained model predicts the repeat
    loss = chart_specs(at)["ih_loss"]["data"][0]["y"]
    np.testing.assert_allclose(np.array(loss, dtype=float), p.loss.numpy(), rtol=1e-6)


def test_new_sequence_button_draws_another_seeded_sequence(tiny_llama):
    at = run_app({"model": "tiny-llama", "ih_half": "8"}, page=PAGE)
    at.button[0].click().run()
    assert_healthy(at)
    p = expected(tiny_llama, half=8, seed=1)
    _, labels, _ = drawn_heatmap(at, "ih_prev_head")
    assert labels == p.labels and "seed 1" in page_text(at)


def test_users_text_twice(tiny_llama):
    text = "the cat sat on the mat"
    at = run_app({"model": "tiny-llama", "text": text, "ih_source": "your text, twice"}, page=PAGE)
    assert_healthy(at)
    ids, period, first = text_twice_ids(tiny_llama, text)
    p = probe(tiny_llama, ids, period, first)
    ind, _, _ = drawn_heatmap(at, "ih_ind_map")
    np.testing.assert_allclose(ind, p.induction.numpy(), atol=1e-6)


def test_an_encoder_in_the_sidebar_falls_back_to_the_tiny_llama():
    at = run_app({}, page=PAGE)  # the bundled BERT
    assert_healthy(at)
    assert "not a causal language model" in page_text(at) and "attnviz-tiny-llama" in page_text(at)


def test_the_loss_chart_draws_chance_and_says_why_the_first_copy_is_worse(default_page, tiny_llama):
    at = default_page
    p = expected(tiny_llama)
    shapes = chart_specs(at)["ih_loss"]["layout"]["shapes"]
    chance = [s for s in shapes if s.get("line", {}).get("dash") == "dash"]
    assert len(chance) == 1 and chance[0]["y0"] == pytest.approx(np.log(p.vocab_size)) and p.vocab_size == 1014
    first, _ = p.copy_losses()
    assert first > np.log(1014)  # the case the text must explain
    text = page_text(at)
    assert "Dashed line: chance, ln 1,014 ≈ 6.92 nats" in text
    assert f"the model puts {p.first_copy_seen_mass():.0%} of its probability, on average, on words it has already " \
           "seen" in text
    assert "trained with the loss on the repeated copies only, never on a first copy" in text
