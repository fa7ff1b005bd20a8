"""The efficient-attention lesson: knob capping, comparisons, cost bookkeeping and the cost chart."""

import numpy as np
import pytest
import torch

from attnviz.engine.efficient import flash_attention
from attnviz.errors import AttnvizError
from attnviz.lessons.efficient.compare import MAX_PATTERN_N, compare, random_qkv, relative_error
from attnviz.lessons.efficient.costs import MAX_COST_N, CostPoint, cost_ns, method_costs, overtakes_at, ratio_words
from attnviz.lessons.efficient.figures import cost_figure
from attnviz.lessons.efficient.methods import METHODS, cap_knobs, timing_knobs


def defaults(method):
    return {kn.key: kn.default for kn in method.knobs}


@pytest.mark.parametrize("key", [k for k, m in METHODS.items() if m.exact])
def test_exact_kernels_patterns_equal_their_reference(key):
    q, k, v = random_qkv(21, 8, seed=1)
    cmp = compare(METHODS[key], q, k, v, defaults(METHODS[key]), None)
    assert cmp.output_error < 1e-5 and cmp.max_weight_delta < 1e-5
    torch.testing.assert_close(cmp.method_weights.sum(-1), torch.ones(21), atol=1e-5, rtol=0)


@pytest.mark.parametrize("key", [k for k, m in METHODS.items() if not m.exact])
def test_approximations_report_a_real_error_and_the_pattern_is_what_the_method_applies(key):
    method = METHODS[key]
    q, k, v = random_qkv(21, 8, seed=2)
    kn = defaults(method)
    cmp = compare(method, q, k, v, kn, None)
    assert cmp.output_error > 1e-3
    torch.testing.assert_close(cmp.method_weights @ v, method.run(q, k, v, kn, None), atol=1e-5, rtol=0)  # out = A V


def test_cap_knobs_clamps_and_says_so():
    capped, notes = cap_knobs(METHODS["window"], {"window": 500}, 30)
    assert capped["window"] == 29 and "500" in notes[0] and "29" in notes[0]
    capped, notes = cap_knobs(METHODS["reformer"], {"buckets": 5, "rounds": 0}, 30)
    assert capped == {"buckets": 4, "rounds": 1} and len(notes) == 2
    assert cap_knobs(METHODS["linformer"], {"rank": 8}, 30) == ({"rank": 8}, [])
    assert timing_knobs(METHODS["flash"], {"tile": 4}, 1024)["tile"] == 128


def test_cost_ns_caps_at_the_machine_limit():
    assert cost_ns(1000) == ([128, 256, 512], False)
    ns, capped = cost_ns(10**6)
    assert capped and ns[-1] == MAX_COST_N


def test_overtakes_at_and_ratio_words():
    exact = [CostPoint(n, n * n * 1e-6, n * n) for n in (128, 256, 512)]
    method = [CostPoint(n, 0.02, 40 * n) for n in (128, 256, 512)]
    assert overtakes_at(method, exact, "seconds") == 256  # 0.0164 < 0.02 at 128, then faster
    assert overtakes_at(method, exact, "peak_bytes") == 128
    assert overtakes_at([CostPoint(128, 1.0, 1)], [CostPoint(128, 0.5, 0)], "seconds") is None
    assert ratio_words(2.0, 1.0, "faster", "slower") == "2.0× faster"
    assert ratio_words(1.0, 3.0, "faster", "slower") == "3.0× slower"


def test_measured_window_memory_grows_like_n_and_chart_has_reference_lines():
    window = method_costs(METHODS["window"], {"window": 8}, [128, 512], repeats=1)
    assert 2.5 < window[1].peak_bytes / window[0].peak_bytes < 6  # 4× the tokens, about 4× the bytes
    exact = [CostPoint(128, 0.01, 10**6), CostPoint(512, 0.1, 16 * 10**6)]
    fig = cost_figure(exact, window, "window", "peak_bytes")
    names = [t.name for t in fig.data]
    assert names[0] == "exact (dense)" and any("n²" in s for s in names) and any("∝ n (" in s for s in names)
    n2 = next(t for t in fig.data if "n²" in t.name)
    np.testing.assert_allclose(np.asarray(n2.y) / n2.y[0], [1, 16])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_bad_input():
    with pytest.raises(AttnvizError):
        random_qkv(0, 8)
    with pytest.raises(AttnvizError):
        random_qkv(8, 10_000)
    q, k, v = random_qkv(MAX_PATTERN_N + 1, 4)
    with pytest.raises(AttnvizError):
        compare(METHODS["flash"], q, k, v, {"tile": 8}, None)
    assert relative_error(flash_attention(q, k, v), flash_attention(q, k, v)) == 0.0
