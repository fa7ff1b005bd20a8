"""Efficient attention against dense exact attention: time, peak tensor memory, ratios and error.

    python benchmarks/bench_efficient.py            # prints a table; a few minutes on a busy 2-core CPU
    python benchmarks/bench_efficient.py --quick    # n = 512 and 4096 only, fewer runs

One head, d = 64, random Q, K, V from N(0, 1) (seeded), float32, CPU, timed on one thread (see measure.seconds).
Time: the fastest of up to 7 runs (3 s budget) after a warm-up (attnviz.engine.efficient.measure.seconds).
Peak memory, two ways:
  - "peak MB": the most bytes of torch tensors held at once while the function runs, counted op by op as
    tensors are allocated and freed (attnviz.engine.efficient.measure.peak_tensor_bytes, a TorchDispatchMode);
    the inputs are not counted. This is the figure the page shows.
  - "RSS MB" (at the largest n only): the same call in a fresh subprocess, after a warm-up call and
    malloc_trim: VmHWM after the call − VmRSS before it, with the peak reset through /proc/self/clear_refs
    and glibc told to mmap every block over 64 kB (so freed tensors leave the resident set). It sees what
    the tensor count cannot (an op's scratch buffers), and the allocator's rounding; tracemalloc sees neither.
Error: ‖out − exact‖ / ‖exact‖ against dense exact attention (for the sparse kernels also against dense
attention with the same mask, which is the kernel's own error).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]


import torch  # noqa: E402

from attnviz.engine.attention import scaled_dot_product_attention  # noqa: E402
from attnviz.engine.efficient import (  # noqa: E402
    bigbird_layout,
    block_sparse_attention,
    flash_attention,
    layout_mask,
    linformer_attention,
    performer_attention,
    reformer_attention,
    shared_qk_attention,
    sliding_window_attention,
)
from attnviz.engine.efficient.measure import peak_tensor_bytes, seconds  # noqa: E402
from attnviz.engine.masks import window_mask  # noqa: E402
from attnviz.lessons.efficient.methods.block_sparse import page_layout  # noqa: E402

NS = (512, 1024, 2048, 4096)
D = 64
WINDOW, TILE, RANK, FEATURES, BUCKETS, ROUNDS = 64, 256, 256, 256, 64, 2
BLOCK, GLOBAL, RANDOM = 64, 2, 2  # BigBird-like: a ±1-block band, GLOBAL global blocks, RANDOM random blocks a row
PAGE_BLOCK = 4  # the page's default block size, with its layout (±1 band, 1 global block, 1 random block)
SPARSE = f"block-sparse B={BLOCK}"


def bigbird(n: int) -> torch.Tensor:
    return bigbird_layout(-(-n // BLOCK), local=1, n_global=GLOBAL, n_random=RANDOM, seed=0)


# name -> (run(q, k, v, n), what its own error is measured against: the mask it stands for at n, "shared-qk", or None)
METHODS = {
    "exact": (lambda q, k, v, n: scaled_dot_product_attention(q, k, v)[0], None),
    f"tiled B={TILE}": (lambda q, k, v, n: flash_attention(q, k, v, block_size=TILE), None),
    f"window w={WINDOW}": (lambda q, k, v, n: sliding_window_attention(q, k, v, WINDOW), lambda n: window_mask(n, WINDOW)),
    SPARSE: (lambda q, k, v, n: block_sparse_attention(q, k, v, bigbird(n), BLOCK),
             lambda n: layout_mask(bigbird(n), BLOCK, n)),
    f"block-sparse B={PAGE_BLOCK}": (lambda q, k, v, n: block_sparse_attention(q, k, v, page_layout(n, PAGE_BLOCK), PAGE_BLOCK),
                                     lambda n: layout_mask(page_layout(n, PAGE_BLOCK), PAGE_BLOCK, n)),
    f"linformer k={RANK}": (lambda q, k, v, n: linformer_attention(q, k, v, RANK), None),
    f"performer m={FEATURES}": (lambda q, k, v, n: performer_attention(q, k, v, FEATURES), None),
    f"reformer b={BUCKETS} r={ROUNDS}": (lambda q, k, v, n: reformer_attention(q, v, BUCKETS, ROUNDS), "shared-qk"),
}


def inputs(n: int):
    g = torch.Generator().manual_seed(n)
    return tuple(torch.randn(1, n, D, generator=g) for _ in range(3))


def rel(out, ref) -> float:
    return float((out - ref).norm() / ref.norm())


def rss_child(name: str, n: int) -> None:
    """Run in a fresh process: print the resident-set growth of one call, as JSON (see the module doc)."""
    def status(field: str) -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

    torch.set_num_threads(1)
    q, k, v = inputs(n)
    run = METHODS[name][0]
    with torch.no_grad():
        run(q, k, v, n)  # warm-up: first-call costs (thread pools, layouts) are not the method's
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        before = status("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM, the peak resident set, to the current one
        run(q, k, v, n)
    print(json.dumps({"rss_bytes": status("VmHWM") - before}))


def rss_bytes(name: str, n: int) -> int | None:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    done = subprocess.run([sys.executable, __file__, "--rss-child", name, str(n)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        print(f"  (RSS of {name} not measured: {done.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])["rss_bytes"]


def main(quick: bool) -> None:
    ns = (NS[0], NS[-1]) if quick else NS
    repeats, budget = (3, 1.5) if quick else (7, 3.0)
    print(f"torch {torch.__version__}, timed on 1 thread, {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} (a machine shared with other jobs: times wobble)")
    print(f"{'n':>5} {'method':<19} {'time ms':>9} {'× exact':>8} {'peak MB':>9} {'× exact':>8} {'error':>9}")
    results: dict[str, list[tuple[int, float, int]]] = {name: [] for name in METHODS}
    for n in ns:
        q, k, v = inputs(n)
        exact_out = METHODS["exact"][0](q, k, v, n)
        for name, (run, mask) in METHODS.items():
            t = seconds(lambda run=run, q=q, k=k, v=v, n=n: run(q, k, v, n), repeats=repeats, budget=budget)
            b = peak_tensor_bytes(lambda run=run, q=q, k=k, v=v, n=n: run(q, k, v, n))
            results[name].append((n, t, b))
            t0, b0 = results["exact"][-1][1:]
            out = run(q, k, v, n)
            extra = ""
            if callable(mask):
                own = scaled_dot_product_attention(q, k, v, mask=mask(n))[0]
                extra = f"  (vs same-mask dense: {rel(out, own):.1e})"
            elif mask == "shared-qk":
                extra = f"  (vs exact shared-QK: {rel(out, shared_qk_attention(q, v)):.1e})"
            print(f"{n:>5} {name:<19} {t * 1e3:>9.1f} {t / t0:>8.2f} {b / 1e6:>9.2f} {b / b0:>8.3f} "
                  f"{rel(out, exact_out):>9.2e}{extra}", flush=True)
    print()
    for name, rows in results.items():
        if name == "exact":
            continue
        for field, what in ((1, "time"), (2, "peak memory")):
            wins = [n for (n, *m), (_, *e) in zip(rows, results["exact"], strict=True) if m[field - 1] < e[field - 1]]
            print(f"{name:<19} beats exact in {what:<11} at n = {', '.join(map(str, wins)) or 'none of ' + str(ns)}")
    tiled = results[f"tiled B={TILE}"]
    growth = [b2 / b1 for (_, _, b1), (_, _, b2) in zip(tiled, tiled[1:], strict=False)]
    exact_growth = [b2 / b1 for (_, _, b1), (_, _, b2) in zip(results["exact"], results["exact"][1:], strict=False)]
    print(f"\ntiled peak memory × per step of n: {', '.join(f'{x:.2f}' for x in growth)} "
          f"(n would be the step, n² its square; exact: {', '.join(f'{x:.2f}' for x in exact_growth)})")
    top = ns[-1]
    (_, tw, bw), (_, te, be) = results[f"window w={WINDOW}"][-1], results["exact"][-1]
    print(f"window w={WINDOW} at n = {top}: {te / tw:.1f}× faster (target ≥ 5), {be / bw:.1f}× less peak memory "
          "(target ≥ 10)")
    (_, ts, bs) = results[SPARSE][-1]
    print(f"{SPARSE} ({GLOBAL} global blocks, ±1-block band, {RANDOM} random blocks a row) at n = {top}: "
          f"peak memory {bs / be:.3f}× dense's (target ≤ 0.5), time {ts / te:.3f}× dense's")

    print(f"\nPeak resident-set growth of one call at n = {top}, each in a fresh process (see the module doc):")
    print(f"{'method':<19} {'RSS MB':>9} {'× exact':>8} {'tensor-count MB':>16}")
    rss = {name: rss_bytes(name, top) for name in METHODS}
    for name, r in rss.items():
        if r is not None and rss["exact"]:
            print(f"{name:<19} {r / 1e6:>9.2f} {r / rss['exact']:>8.3f} {results[name][-1][2] / 1e6:>16.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rss-child"]:
        rss_child(sys.argv[2], int(sys.argv[3]))
    else:
        main(quick="--quick" in sys.argv[1:])
