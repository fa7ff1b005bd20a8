"""Efficient attention against dense exact attention: time, peak tensor memory, ratios and error.

    python benchmarks/bench_efficient.py            # prints a table; a few minutes on a busy 2-core CPU

One head, d = 64, random Q, K, V from N(0, 1) (seeded), float32, CPU, timed on one thread (see measure.seconds).
Time: the fastest of up to 7 runs (3 s budget) after a warm-up (attnviz.engine.efficient.measure.seconds).
Peak memory: the most bytes of torch tensors held at once while the function runs, counted op by op
as tensors are allocated and freed (attnviz.engine.efficient.measure.peak_tensor_bytes); the inputs
are not counted. Error: ‖out − exact‖ / ‖exact‖ against dense exact attention (for the window also
against dense attention with the same window mask, which is the kernel's own error).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import torch  # noqa: E402

from attnviz.engine.attention import scaled_dot_product_attention  # noqa: E402
from attnviz.engine.efficient import (  # noqa: E402
    flash_attention,
    linformer_attention,
    performer_attention,
    sliding_window_attention,
)
from attnviz.engine.efficient.measure import peak_tensor_bytes, seconds  # noqa: E402
from attnviz.engine.masks import window_mask  # noqa: E402

NS = (512, 1024, 2048, 4096)
D = 64
WINDOW, TILE, RANK, FEATURES = 64, 256, 256, 256
METHODS = {
    "exact": lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    f"tiled B={TILE}": lambda q, k, v: flash_attention(q, k, v, block_size=TILE),
    f"window w={WINDOW}": lambda q, k, v: sliding_window_attention(q, k, v, WINDOW),
    f"linformer k={RANK}": lambda q, k, v: linformer_attention(q, k, v, RANK),
    f"performer m={FEATURES}": lambda q, k, v: performer_attention(q, k, v, FEATURES),
}


def rel(out, ref) -> float:
    return float((out - ref).norm() / ref.norm())


def main() -> None:
    print(f"torch {torch.__version__}, timed on 1 thread, {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} (a machine shared with other jobs: times wobble)")
    print(f"{'n':>5} {'method':<16} {'time ms':>9} {'× exact':>8} {'peak MB':>9} {'exact/this':>10} {'error':>9}")
    results: dict[str, list[tuple[int, float, int]]] = {name: [] for name in METHODS}
    for n in NS:
        g = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(1, n, D, generator=g) for _ in range(3))
        exact_out = METHODS["exact"](q, k, v)
        for name, fn in METHODS.items():
            t = seconds(lambda fn=fn, q=q, k=k, v=v: fn(q, k, v), repeats=7, budget=3.0)
            b = peak_tensor_bytes(lambda fn=fn, q=q, k=k, v=v: fn(q, k, v))
            results[name].append((n, t, b))
            t0, b0 = results["exact"][-1][1:]
            err = rel(fn(q, k, v), exact_out)
            extra = ""
            if name.startswith("window"):
                masked = scaled_dot_product_attention(q, k, v, mask=window_mask(n, WINDOW))[0]
                extra = f"  (vs same-mask dense: {rel(fn(q, k, v), masked):.1e})"
            print(f"{n:>5} {name:<16} {t * 1e3:>9.1f} {t / t0:>8.2f} {b / 1e6:>9.2f} {b0 / b:>10.1f} {err:>9.2e}{extra}",
                  flush=True)
    print()
    for name, rows in results.items():
        if name == "exact":
            continue
        for field, what in ((1, "time"), (2, "peak memory")):
            wins = [n for (n, *m), (_, *e) in zip(rows, results["exact"], strict=True) if m[field - 1] < e[field - 1]]
            print(f"{name:<16} beats exact in {what:<11} at n = {', '.join(map(str, wins)) or 'none of ' + str(NS)}")
    tiled = results[f"tiled B={TILE}"]
    growth = [b2 / b1 for (_, _, b1), (_, _, b2) in zip(tiled, tiled[1:], strict=False)]
    exact_growth = [b2 / b1 for (_, _, b1), (_, _, b2) in zip(results["exact"], results["exact"][1:], strict=False)]
    print(f"\ntiled peak memory × per doubling of n: {', '.join(f'{x:.2f}' for x in growth)} "
          f"(n would be 2, n² 4; exact: {', '.join(f'{x:.2f}' for x in exact_growth)})")
    (_, tw, bw), (_, te, be) = results[f"window w={WINDOW}"][-1], results["exact"][-1]
    print(f"window w={WINDOW} at n = {NS[-1]}: {te / tw:.1f}× faster (target ≥ 5), {be / bw:.1f}× less peak memory "
          "(target ≥ 10)")


if __name__ == "__main__":
    main()
