"""The efficient-attention page in Streamlit's AppTest: what it shows equals attnviz's own numbers."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.efficient import costs
from attnviz.lessons.efficient.compare import MAX_PATTERN_N, compare, random_qkv
from attnviz.lessons.efficient.methods import METHODS

PAGE = "app_pages/efficient.py"
TEXT = "The cat sat on the mat because it was tired."
WEIGHT_ATOL = 0.0005 + 1e-7  # weights are drawn as thousandths


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_model_qkv_patterns_and_error_equal_attnviz(toy):
    at = run_app({"model": "toy", "text": TEXT, "eff_method": "window", "eff_window_window": "1", "eff_max_n": "256",
                  "layer": "1", "eff_head": "1"}, page=PAGE)
    assert_healthy(at)
    trace = toy.run(TEXT, keep=True).traces[1]
    q, k, v = trace.q[0, 1], trace.k[0, 1], trace.v[0, 1]
    cmp = compare(METHODS["window"], q, k, v, {"window": 1}, trace.scale)
    ref, rows, _ = drawn_heatmap(at, "eff_reference")
    assert len(rows) == q.shape[0]
    np.testing.assert_allclose(ref, cmp.reference_weights.numpy(), atol=WEIGHT_ATOL)
    np.testing.assert_allclose(drawn_heatmap(at, "eff_method_weights")[0], cmp.method_weights.numpy(), atol=WEIGHT_ATOL)
    np.testing.assert_allclose(drawn_heatmap(at, "eff_delta")[0], cmp.weight_delta.abs().numpy(), atol=1e-6)
    shown = metrics(at)
    assert shown["‖out − exact‖ / ‖exact‖"] == f"{cmp.output_error:.2e}"
    assert shown["error against full attention"] == f"{cmp.full_error:.2e}"
    assert float(shown["error against full attention"]) > 0.01  # a window of 1 changes the head
    assert np.all(np.triu(ref, 2) == 0)  # nothing drawn outside the band


def test_random_qkv_linformer_out_of_range_rank_is_capped_and_said():
    at = run_app({"model": "toy", "eff_source": "random", "eff_method": "linformer", "eff_linformer_rank": "1000",
                  "eff_n": "20", "eff_d": "8", "eff_seed": "3", "eff_max_n": "128"}, page=PAGE)
    assert_healthy(at)
    assert any("1000 is not allowed for n = 20" in w.value and "so 20 is used" in w.value for w in at.warning)
    q, k, v = random_qkv(20, 8, 3)
    cmp = compare(METHODS["linformer"], q, k, v, {"rank": 20, "projection": "pooled"}, None)
    assert cmp.output_error < 1e-5  # pooled projections at k = n are the identity: exact
    assert metrics(at)["‖out − exact‖ / ‖exact‖"] == f"{cmp.output_error:.2e}"
    np.testing.assert_allclose(drawn_heatmap(at, "eff_method_weights")[0], cmp.method_weights.numpy(), atol=WEIGHT_ATOL)


@pytest.mark.parametrize("method, extra", [("performer", {"eff_performer_features": "32"}),
                                           ("reformer", {"eff_reformer_buckets": "4", "eff_reformer_rounds": "2"}),
                                           ("block-sparse", {"eff_block-sparse_block": "3"}),
                                           ("longformer", {"eff_longformer_globals": "2"})])
def test_every_method_draws_and_reports_its_own_error(method, extra):
    at = run_app({"model": "toy", "eff_source": "random", "eff_method": method, "eff_n": "16", "eff_max_n": "128",
                  **extra}, page=PAGE)
    assert_healthy(at)
    knobs = {kn.key: int(extra.get(f"eff_{method}_{kn.key}", kn.default)) for kn in METHODS[method].knobs}
    q, k, v = random_qkv(16, 16, 0)
    cmp = compare(METHODS[method], q, k, v, knobs, None)
    assert metrics(at)["‖out − exact‖ / ‖exact‖"] == f"{cmp.output_error:.2e}"
    assert METHODS[method].trade in page_text(at)


def test_too_large_n_is_capped_and_said_and_memory_points_equal_the_measurement(monkeypatch):
    monkeypatch.setattr(costs, "MAX_COST_N", 256)  # the page reads it at run time: keeps this test fast
    at = run_app({"model": "toy", "eff_source": "random", "eff_method": "window", "eff_n": "100000",
                  "eff_max_n": "1000000"}, page=PAGE)
    assert_healthy(at)
    text = page_text(at)
    assert f"n = 100,000 is more than the {MAX_PATTERN_N} tokens" in text
    assert "too large for this machine" in text and "capped at n = 256" in text
    assert drawn_heatmap(at, "eff_reference")[0].shape == (MAX_PATTERN_N, MAX_PATTERN_N)
    spec = chart_specs(at)["eff_cost_peak_bytes"]
    exact_mb = decode_plotly_array(spec["data"][0]["y"]).astype(float)
    expected = [p.peak_bytes / 1e6 for p in costs.exact_costs([128, 256], repeats=1)]
    np.testing.assert_allclose(exact_mb, expected, rtol=1e-9)
    window_mb = decode_plotly_array(spec["data"][1]["y"]).astype(float)
    assert window_mb[-1] < exact_mb[-1]  # the band holds less than n² scores


def test_masks_lab_cost_lesson_links_here():
    at = run_app({"model": "toy", "text": "A short text."}, page="app_pages/masks.py")
    assert_healthy(at)
    assert "saves nothing" in page_text(at)
    links = at.get("page_link")
    assert any("efficient_attention" in str(link.proto.page) for link in links)
