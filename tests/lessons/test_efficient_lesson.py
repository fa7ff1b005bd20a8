"""The efficient-attention lesson: knob capping, comparisons, cost bookkeeping and the cost chart."""

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from attnviz.engine.efficient import flash_attention
from attnviz.errors import AttnvizError
from attnviz.lessons.efficient.compare import MAX_PATTERN_N, compare, random_qkv, relative_error
from attnviz.lessons.efficient.costs import MAX_COST_N, CostPoint, cost_ns, method_costs, overtakes_at, ratio_words
from attnviz.lessons.efficient.explain import cost_sentence
from attnviz.lessons.efficient.figures import cost_figure
from attnviz.lessons.efficient.method import cap_knobs, knob_default, knob_defaults, timing_knobs
from attnviz.lessons.efficient.methods import METHODS
from attnviz.lessons.efficient.tiles import tile_sizes_for


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


# ---- tile sizes and knob defaults for the text's n ---------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 12, 15, 16, 17, 64, 100, MAX_PATTERN_N])
def test_tile_sizes_are_valid_for_n_and_the_default_makes_several_tiles(n):
    options, default = tile_sizes_for(n)
    assert options == sorted(set(options)) and options[-1] == n and all(1 <= o <= n for o in options)
    assert default in options
    if n > 1:
        assert default < n and -(-n // default) >= 2  # several tiles, never the whole text in one
    assert tile_sizes_for(15) == ([1, 2, 4, 8, 15], 4)  # tiny-llama's 15 tokens: 4 tiles a side


def test_tile_sizes_reject_a_bad_n():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(AttnvizError):
            tile_sizes_for(bad)


def test_the_tile_knob_starts_below_n_where_the_fixed_16_covered_or_overran_the_text():
    tile = METHODS["flash"].knobs[0]
    assert knob_default(tile, 15) == 4 and knob_default(tile, 12) == 4  # was 16: a warning, then one tile


@pytest.mark.parametrize("n", [1, 2, 3, 7, 12, 15, 24, MAX_PATTERN_N])
@pytest.mark.parametrize("key", list(METHODS))
def test_a_fresh_page_warns_about_no_knob_at_any_n(key, n):
    method = METHODS[key]
    capped, notes = cap_knobs(method, knob_defaults(method, n), n)
    assert notes == [] and capped == knob_defaults(method, n)


# ---- scores each method computes, and the cost sentences --------------------------------------------------


class _ScoreCount(TorchDispatchMode):
    """Counts the entries of every matrix product's output whose last dimension is not one of `skip`."""

    def __init__(self, skip: set[int]):
        super().__init__()
        self.skip, self.total = skip, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in (torch.ops.aten.mm.default, torch.ops.aten.bmm.default) and out.shape[-1] not in self.skip:
            self.total += out.numel()
        return out


@pytest.mark.parametrize("key, knobs", [("flash", {"tile": 8}), ("window", {"window": 3}),
                                        ("longformer", {"window": 3, "globals": 2}), ("block-sparse", {"block": 4}),
                                        ("linformer", {"rank": 6}), ("reformer", {"buckets": 4, "rounds": 2})])
def test_scores_computed_is_what_the_kernel_computes(key, knobs):
    """Every q·k score is an entry of a matrix product; the products with V (d_v = 3 wide) and Linformer's
    projections (d_k = 5 wide) are not scores; nor are Reformer's hash rotations (b/2 = 2 a round, 4 for two)."""
    method, n = METHODS[key], 46  # the last tile 6 wide, not d_k
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(n, 5, generator=g), torch.randn(n, 5, generator=g), torch.randn(n, 3, generator=g)
    with torch.no_grad(), _ScoreCount({3, 5, 2, 4} if key == "reformer" else {3, 5}) as count:
        method.run(q, k, v, knobs, None)
    assert count.total == method.scores(knobs, n)


def test_block_sparse_scores_at_4096_are_a_small_share_of_dense():
    """The page's layout at n = 4096: one global block row used to pad every row to all key blocks (n² and more)."""
    assert METHODS["block-sparse"].scores({"block": 4}, 4096) < 0.01 * 4096**2
    assert METHODS["block-sparse"].scores({"block": 64}, 4096) < 0.25 * 4096**2


@pytest.mark.parametrize("key", list(METHODS))
def test_cost_sentences_say_faster_or_slower_as_measured_and_carry_the_numbers(key):
    method, n = METHODS[key], 4096
    knobs = timing_knobs(method, knob_defaults(method, 15), n)
    exact = [CostPoint(n, 0.2, 135_000_000)]
    slow = cost_sentence(method, knobs, [CostPoint(n, 0.5, 10_000_000)], exact)
    fast = cost_sentence(method, knobs, [CostPoint(n, 0.05, 10_000_000)], exact)
    assert "2.5× slower" in slow and "faster" not in slow.split(";")[0] and "500.0 ms against 200.0 ms" in slow
    assert "4.0× faster" in fast and "slower" not in fast and "50.0 ms against 200.0 ms" in fast
    assert "GPU" in slow and slow.endswith(".") and "4,096" in slow
    if key == "flash":
        assert "overhead" in slow and "overhead" not in fast and "1,024 tiles of 128 × 128" in slow
