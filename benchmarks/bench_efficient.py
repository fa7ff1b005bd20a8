"""Efficient attention against dense exact attention: time, peak tensor memory, ratios and error.

    python benchmarks/bench_efficient.py            # prints a table; a few minutes on a busy 2-core CPU
    python benchmarks/bench_efficient.py --quick    # n = 512 and 4096 only, fewer runs

Every method the efficient-attention page offers, read from its registry (attnviz.lessons.efficient.methods), with
the knobs in KNOBS, against dense exact attention: a method registered there is timed here with no other change.
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
Error: ‖out − exact‖ / ‖exact‖ against dense exact attention (for a method with a reference of its own, also
against that: dense attention with its mask for the sparse kernels, exact shared-QK attention for Reformer, which is
the kernel's own error).
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


import itertools  # noqa: E402

import torch  # noqa: E402

from attnviz.engine.attention import scaled_dot_product_attention  # noqa: E402
from attnviz.engine.efficient.measure import peak_tensor_bytes, seconds  # noqa: E402
from attnviz.lessons.efficient.method import Method, knob_defaults, reference_output  # noqa: E402
from attnviz.lessons.efficient.methods import METHODS as REGISTERED  # noqa: E402

NS = (512, 1024, 2048, 4096)
D = 64
# The knobs every registered method is timed with, by knob name (a method takes the ones it has, its defaults for the
# others, and the first option of each switch); a tuple times one row per value. Sized for n in the thousands: the
# page's defaults are for a sentence.
KNOBS = {"tile": 256, "window": 64, "globals": 2, "block": (64, 4), "rank": 256, "features": 256, "buckets": 64,
         "rounds": 2}
EXACT = "exact"


def settings(method: Method, n: int) -> list[dict]:
    """The knob values the benchmark times `method` with at n tokens: one dict per row."""
    base = knob_defaults(method, n) | {switch.key: switch.options[0] for switch in method.switches}
    chosen = {knob.key: KNOBS[knob.key] for knob in method.knobs if knob.key in KNOBS}
    values = [v if isinstance(v, tuple) else (v,) for v in chosen.values()]
    return [base | dict(zip(chosen, combo, strict=True)) for combo in itertools.product(*values)]


def row_name(method: Method, knobs: dict) -> str:
    return " ".join([method.key, *(f"{knob.key}={knobs[knob.key]}" for knob in method.knobs)])


def rows() -> dict:
    """Row name -> (run(q, k, v), what its own error is measured against (None: exact attention itself)): dense exact
    attention, then every registered method in the registry's order (a new one with no other change here)."""
    out = {EXACT: (lambda q, k, v: scaled_dot_product_attention(q, k, v)[0], None)}
    for method in REGISTERED.values():
        for knobs in settings(method, NS[-1]):
            out[row_name(method, knobs)] = (
                lambda q, k, v, m=method, kn=knobs: m.run(q, k, v, kn, None),
                None if method.reference == "full" else (
                    lambda q, k, v, m=method, kn=knobs: reference_output(m, q, k, v, kn, None)))
    return out


ROWS = rows()
WIDTH = max(map(len, ROWS)) + 1


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
    run = ROWS[name][0]
    with torch.no_grad():
        run(q, k, v)  # warm-up: first-call costs (thread pools, layouts) are not the method's
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        before = status("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM, the peak resident set, to the current one
        run(q, k, v)
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
    print(f"{'n':>5} {'method':<{WIDTH}} {'time ms':>9} {'× exact':>8} {'peak MB':>9} {'× exact':>8} {'error':>9}")
    results: dict[str, list[tuple[int, float, int]]] = {name: [] for name in ROWS}
    for n in ns:
        q, k, v = inputs(n)
        exact_out = ROWS[EXACT][0](q, k, v)
        for name, (run, own) in ROWS.items():
            t = seconds(lambda run=run, q=q, k=k, v=v: run(q, k, v), repeats=repeats, budget=budget)
            b = peak_tensor_bytes(lambda run=run, q=q, k=k, v=v: run(q, k, v))
            results[name].append((n, t, b))
            t0, b0 = results[EXACT][-1][1:]
            out = run(q, k, v)
            extra = "" if own is None else f"  (vs its own reference: {rel(out, own(q, k, v)):.1e})"
            print(f"{n:>5} {name:<{WIDTH}} {t * 1e3:>9.1f} {t / t0:>8.2f} {b / 1e6:>9.2f} {b / b0:>8.3f} "
                  f"{rel(out, exact_out):>9.2e}{extra}", flush=True)
    print()
    for name, rows in results.items():
        if name == EXACT:
            continue
        for field, what in ((1, "time"), (2, "peak memory")):
            wins = [n for (n, *m), (_, *e) in zip(rows, results[EXACT], strict=True) if m[field - 1] < e[field - 1]]
            print(f"{name:<{WIDTH}} beats exact in {what:<11} at n = {', '.join(map(str, wins)) or 'none of ' + str(ns)}")
    print("\npeak memory × per step of n (n would be the step, n² its square):")
    for name, rows in results.items():
        growth = [b2 / b1 for (_, _, b1), (_, _, b2) in itertools.pairwise(rows)]
        print(f"{name:<{WIDTH}} {', '.join(f'{x:.2f}' for x in growth)}")
    top = ns[-1]
    (_, te, be) = results[EXACT][-1]
    print(f"\nAt n = {top}, against dense exact attention:")
    for name, rows in results.items():
        (_, t, b) = rows[-1]
        print(f"{name:<{WIDTH}} time {t / te:.3f}× ({te / t:.1f}× faster), peak memory {b / be:.3f}× "
              f"({be / b:.1f}× less)")

    print(f"\nPeak resident-set growth of one call at n = {top}, each in a fresh process (see the module doc):")
    print(f"{'method':<{WIDTH}} {'RSS MB':>9} {'× exact':>8} {'tensor-count MB':>16}")
    rss = {name: rss_bytes(name, top) for name in ROWS}
    for name, r in rss.items():
        if r is not None and rss[EXACT]:
            print(f"{name:<{WIDTH}} {r / 1e6:>9.2f} {r / rss[EXACT]:>8.3f} {results[name][-1][2] / 1e6:>16.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rss-child"]:
        rss_child(sys.argv[2], int(sys.argv[3]))
    else:
        main(quick="--quick" in sys.argv[1:])
