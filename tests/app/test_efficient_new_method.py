"""A new efficient-attention method is one module's worth of data registered in one place: defined here, in the
test, and registered, it is offered, drawn, compared, timed and explained by the lesson and the page with no
other change (the page's intro names it among the exact kernels too)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
import torch
from apptest_helpers import assert_healthy, drawn_heatmap, page_text, run_app

from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.lessons.efficient.compare import compare, random_qkv
from attnviz.lessons.efficient.costs import CostPoint
from attnviz.lessons.efficient.explain import at_n, cost_sentence, timed
from attnviz.lessons.efficient.method import Knob, Method, Switch
from attnviz.lessons.efficient.methods import METHODS, register

PAGE = "app_pages/efficient.py"
WEIGHT_ATOL = 0.0005 + 1e-7  # weights are drawn as thousandths


def strided_mask(n: int, knobs: dict) -> torch.Tensor:
    """(n, n) bool: query i sees key j when i − j is a multiple of the stride (and j ≤ i with 'past')."""
    rel = torch.arange(n).view(n, 1) - torch.arange(n).view(1, n)  # i − j  (n, n)
    allowed = rel % knobs["stride"] == 0
    return allowed & (rel >= 0) if knobs.get("direction") == "past" else allowed


def strided_explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    return (f"{at_n(e)} strided computes all {e.n * e.n:,} scores with a stride of {knobs['stride']}, and it "
            f"{timed(m, e)}", "a GPU kernel would skip the pairs the stride leaves out")


STRIDED = Method(
    "strided", "Strided attention (every s-th key)", True,
    "Each query sees only the keys a multiple of s away: the pattern of a sparse transformer's strided head.",
    (Knob("stride", "Stride s", 1, lambda n: max(n, 1), 2),),
    lambda q, k, v, kn, s: scaled_dot_product_attention(q, k, v, mask=strided_mask(q.shape[-2], kn), scale=s)[0],
    lambda kn, n: n * n, strided_explain, reference="masked", mask=lambda n, kn: strided_mask(n, kn),
    switches=(Switch("direction", "Keys on which side", ("both", "past"), help="past: no key after the query"),))


@pytest.fixture
def strided():
    register(STRIDED)
    try:
        yield STRIDED
    finally:
        del METHODS[STRIDED.key]


def test_a_key_is_registered_once(strided):
    with pytest.raises(ValueError, match="already registered"):
        register(strided)


def test_the_lesson_runs_a_registered_method(strided):
    q, k, v = random_qkv(12, 8, 1)
    cmp = compare(METHODS["strided"], q, k, v, {"stride": 3, "direction": "past"}, None)
    allowed = strided_mask(12, {"stride": 3, "direction": "past"})
    assert cmp.output_error < 1e-6  # exact against its own mask
    assert float(cmp.method_weights[~allowed].abs().max()) == 0.0
    sentence = cost_sentence(strided, {"stride": 3}, [CostPoint(128, 0.5, 10)], [CostPoint(128, 0.2, 10)])
    assert sentence.startswith("At n = 128 on this CPU strided computes all 16,384 scores") and "2.5× slower" in sentence


def test_the_page_offers_draws_and_explains_a_registered_method(strided):
    at = run_app({"model": "toy", "eff_source": "random", "eff_method": "strided", "eff_strided_stride": "3",
                  "eff_direction": "past", "eff_n": "12", "eff_d": "8", "eff_seed": "1", "eff_max_n": "128"}, page=PAGE)
    assert_healthy(at)
    assert "strided" in at.selectbox(key="eff_method").options
    assert at.number_input(key="eff_strided_stride").value == 3
    assert at.radio(key="eff_direction").label == "Keys on which side"
    assert at.radio(key="eff_direction").value == "past"
    text = page_text(at)
    assert STRIDED.trade in text
    assert "exact kernels (flash, window, longformer, block-sparse, strided)" in text
    assert "At n = 128 on this CPU strided computes all 16,384 scores with a stride of 3" in text
    knobs = {"stride": 3, "direction": "past"}
    cmp = compare(STRIDED, *random_qkv(12, 8, 1), knobs, None)
    reference, rows, _ = drawn_heatmap(at, "eff_reference")
    assert len(rows) == 12
    np.testing.assert_allclose(reference, cmp.reference_weights.numpy(), atol=WEIGHT_ATOL)
    np.testing.assert_allclose(drawn_heatmap(at, "eff_method_weights")[0], cmp.method_weights.numpy(), atol=WEIGHT_ATOL)
    assert np.all(np.triu(reference, 1) == 0)  # 'past': nothing above the diagonal
    assert {m.label: m.value for m in at.metric}["‖out − exact‖ / ‖exact‖"] == f"{cmp.output_error:.2e}"


def test_the_benchmark_times_a_registered_method(strided):
    """benchmarks/bench_efficient.py reads the registry: a new method is a row of it, its own error measured against
    its dense mask."""
    from benchmarks import bench_efficient  # noqa: PLC0415 - a script's module, imported only here

    rows = bench_efficient.rows()
    (name,) = [name for name in rows if name.startswith("strided ")]
    assert name == "strided stride=2"  # no knob of the benchmark's: its default
    run, own = rows[name]
    q, k, v = random_qkv(12, 8, 1)
    assert torch.allclose(run(q, k, v), own(q, k, v), atol=1e-6)
    top = bench_efficient.NS[-1]
    assert set(rows) >= {bench_efficient.row_name(m, kn) for m in METHODS.values() for kn in bench_efficient.settings(m, top)}
