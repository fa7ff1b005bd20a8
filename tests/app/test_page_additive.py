"""The additive vs dot-product page in AppTest: the patterns, losses and sizes on screen are attnviz's."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.additive import cost as ct
from attnviz.lessons.additive import scoring as sc

PAGE = "app_pages/additive.py"
TEXT = "The cat sat on the mat."
WEIGHT_TOL = 0.0005 + 1e-7  # weights are drawn in thousandths


@pytest.fixture(scope="module")
def default_page():
    return run_app({"text": TEXT}, page=PAGE)


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_fixed_weights_on_random_queries(default_page):
    at = default_page
    assert_healthy(at)
    q, k, v = sc.random_qkv(8, 16, 0)
    w = sc.seeded_additive_weights(16, 16, 16, 0)
    _, a_dot = sc.dot_product_attention(q, k, v)
    _, a_add = sc.additive_attention(q, k, v, w)
    np.testing.assert_allclose(drawn_heatmap(at, "add_dot_map")[0], a_dot.numpy(), atol=WEIGHT_TOL)
    np.testing.assert_allclose(drawn_heatmap(at, "add_add_map")[0], a_add.numpy(), atol=WEIGHT_TOL)
    diff = (a_add - a_dot).abs()
    np.testing.assert_allclose(drawn_heatmap(at, "add_diff_map")[0], diff.numpy(), atol=1e-6)
    assert metric(at, "max |Δ| weight") == f"{float(diff.max()):.2e}"
    e = sc.additive_scores(q, k, w)
    assert f"e_{{01}} = {float(e[0, 1]):.4f}".rstrip("0") in page_text(at).replace("−", "-")
    assert "Additive weights W, U, v: fixed, seeded; hidden width d_a = 16." in page_text(at)


def test_learned_to_agree_shows_the_fits_losses_and_pattern():
    at = run_app({"text": TEXT, "add_how": "fitted", "add_steps": "100", "add_n": "6", "add_d": "8", "add_da": "8"},
                 page=PAGE)
    assert_healthy(at)
    q, k, v = sc.random_qkv(6, 8, 0)
    fit = sc.fit_additive_to_dot_product(q, k, 8, 100, seed=0)
    assert metric(at, "fit loss before") == f"{fit.losses[0]:.3g}"
    assert metric(at, "fit loss after") == f"{fit.losses[-1]:.3g}"
    assert fit.losses[-1] < fit.losses[0]
    _, a_add = sc.additive_attention(q, k, v, fit.weights)
    np.testing.assert_allclose(drawn_heatmap(at, "add_add_map")[0], a_add.numpy(), atol=WEIGHT_TOL)
    loss = decode_plotly_array(chart_specs(at)["add_loss"]["data"][0]["y"])
    np.testing.assert_allclose(loss, np.maximum(fit.losses, 1e-9), rtol=1e-6)


def test_the_models_own_queries_and_keys(toy):
    at = run_app({"text": TEXT, "model": "toy", "add_source": "model", "add_head": "1"}, page=PAGE)
    assert_healthy(at)
    res = toy.run(TEXT, keep=True)
    z, rows, _ = drawn_heatmap(at, "add_dot_map")
    np.testing.assert_allclose(z, res.attentions[0, 1].numpy(), atol=WEIGHT_TOL)  # dot-product = the model's own head
    assert rows == res.labels
    q, k, v = sc.head_queries_keys(res, 0, 1)
    _, a_add = sc.additive_attention(q, k, v, sc.seeded_additive_weights(4, 4, 16, 0))
    np.testing.assert_allclose(drawn_heatmap(at, "add_add_map")[0], a_add.numpy(), atol=WEIGHT_TOL)
    assert "toy's layer 0 head 1" in page_text(at)


def test_a_causal_mask_applies_to_both():
    at = run_app({"text": TEXT, "add_causal": "true"}, page=PAGE)
    assert_healthy(at)
    for key in ("add_dot_map", "add_add_map"):
        z = drawn_heatmap(at, key)[0]
        assert np.all(np.triu(z, 1) == 0)
        np.testing.assert_allclose(z.sum(-1), 1.0, atol=8 * 0.0005)


def test_cost_chart_shows_the_measured_sizes(default_page):
    spec = chart_specs(default_page)["add_cost"]
    ns = list(decode_plotly_array(spec["data"][1]["x"]))
    assert ns == list(ct.COST_NS)
    mib = decode_plotly_array(spec["data"][1]["y"])
    np.testing.assert_allclose(mib, [ct.additive_intermediate_bytes(n, n, 64) / 2**20 for n in ct.COST_NS], rtol=1e-6)
    times = decode_plotly_array(spec["data"][0]["y"])
    assert np.all(times > 0) and np.all(np.isfinite(times))
    assert f"n stops at {ct.MAX_COST_N}" in page_text(default_page)


def test_bad_inputs_get_messages_not_tracebacks(toy):
    at = run_app({"text": TEXT, "add_n": "999", "add_d": "-3"}, page=PAGE)  # out-of-range URL values
    assert_healthy(at)
    assert "add_dot_map" in chart_specs(at)
    long_text = " ".join(f"w{i}" for i in range(sc.MAX_N + 5))
    at = run_app({"text": long_text, "add_source": "model"}, page=PAGE)  # MiniLM: 71 tokens
    assert_healthy(at)
    assert any(f"at most {sc.MAX_N}" in e.value for e in at.error)
    assert "add_cost" in chart_specs(at)  # the rest of the page still works
    at = run_app({"text": "x", "model": "toy", "add_source": "model"}, page=PAGE)
    at.text_area(key="text").input("").run()
    assert_healthy(at)
    assert any("Type some text" in w.value for w in at.warning)


def test_the_cost_text_says_the_theoretical_costs_are_alike_and_what_differs(default_page):
    """Both score n² pairs with a vector's width of work each: no 'extra factor d_a in work'. What differs is the
    one matrix multiply and the (n, n, d_a) tensor a plain additive implementation builds."""
    text = page_text(default_page)
    assert "extra factor d_a" not in text
    assert "so their theoretical cost is similar" in text and "d = 64 multiply-adds for a dot product" in text
    assert "additive first builds the whole (n, n, d_a) tensor of W q_i + U k_j, d_a = 64 times the memory" in text
    assert "The count of operations is similar; how fast they run is not." in text
