"""Engine speed and memory against transformers, on the bundled all-MiniLM-L6-v2.

    python benchmarks/bench_engine.py

Speed: our from-scratch forward with every intermediate kept (Model.forward(ids, keep=True): Q, K, V,
scores, weights, head outputs and residuals per layer) against transformers' eager forward with
output_attentions=True, on the very same token ids, in the same process, alternating one call of each
so that both see the same machine state. Median of several runs after a warm-up. A second table adds
what model.run(text, keep=True) costs end to end (tokenizer, attentions stacked into a RunResult).

Memory: peak resident set size (ru_maxrss) of a fresh Python process that loads our model and runs
one 512-token text with intermediates kept, so that transformers' own copy of the weights is not counted.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from transformers import AutoModel

import attnviz

SIZES = (16, 64, 256, 512)
RUNS = {16: 21, 64: 21, 256: 11, 512: 7}
WARMUP = 2
RATIO_TARGET, RATIO_LIMIT = 1.0, 1.3
MEMORY_TARGET_MB = 1024
# Every word here is one MiniLM token (no ##pieces), so n-2 words make exactly n tokens with [CLS] and [SEP].
SENTENCE = "the quick brown fox jumps over the lazy dog while the small cat sleeps on a warm mat by the door ."


def body_words(n_tokens: int) -> list[str]:
    """The sentence repeated and sliced to n_tokens - 2 words (one token each)."""
    words = SENTENCE.split()
    return (words * (n_tokens // len(words) + 1))[: n_tokens - 2]


def ids_of_length(model, n_tokens: int) -> torch.Tensor:
    """(1, n_tokens) ids of the repeated sentence, sliced to n_tokens - 2 words, between [CLS] and [SEP]."""
    text = " ".join(body_words(n_tokens))
    ids = model.encode(text).ids
    assert len(ids) == n_tokens, (len(ids), n_tokens)
    return torch.tensor([ids])


def alternate(fns: dict, runs: int) -> dict[str, list[float]]:
    """ms of each call of each function, calling them in turn so that drifts in machine load hit all alike."""
    for fn in fns.values():
        for _ in range(WARMUP):
            fn()
    times = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def paired_ratio(mine: list[float], theirs: list[float]) -> float:
    """Median of per-run ratios: each run's two calls were adjacent in time, so load drift cancels."""
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def speed_table() -> list[tuple[int, float, float, float, float, float]]:
    """(tokens, ours ms, transformers ms, ratio, run ms, run ratio) per size."""
    ours = attnviz.load_model(device="cpu")
    theirs = AutoModel.from_pretrained(ours.source, attn_implementation="eager", dtype=torch.float32).eval()
    rows = []
    for n in SIZES:
        ids = ids_of_length(ours, n)
        text = " ".join(body_words(n))

        def our_forward(ids=ids):
            with torch.inference_mode():
                return ours.forward(ids, None, True, keep=True)

        def their_forward(ids=ids):
            with torch.inference_mode():
                return theirs(input_ids=ids, output_attentions=True)

        def our_run(text=text):
            return ours.run(text, keep=True)

        t = alternate({"ours": our_forward, "theirs": their_forward, "run": our_run}, RUNS[n])
        ms = {name: statistics.median(times) for name, times in t.items()}
        rows.append((n, ms["ours"], ms["theirs"], paired_ratio(t["ours"], t["theirs"]),
                     ms["run"], paired_ratio(t["run"], t["theirs"])))
    return rows


MEMORY_PROBE = """
import os, resource, sys
os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, {root!r})
import attnviz
model = attnviz.load_model(device="cpu")
text = " ".join({words!r})
res = model.run(text, keep=True)
assert len(res.tokens) == 512, len(res.tokens)
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")] if sys.platform == "linux" else []
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, *hwm)  # KiB on Linux
"""


def peak_memory_mb() -> tuple[float, float | None]:
    """Peak RSS of load + one 512-token run with intermediates, in a fresh process (MiB).

    Returns (ru_maxrss, VmHWM or None). Linux carries a parent's peak RSS over fork+exec into the
    child's ru_maxrss, so this runs before the parent loads any model; VmHWM (Linux) is the child's own.
    """
    root = str(Path(__file__).resolve().parents[1])
    code = MEMORY_PROBE.format(root=root, words=body_words(512))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    fields = [int(f) for f in out.stdout.strip().splitlines()[-1].split()]
    maxrss = fields[0] / 1024 if sys.platform != "darwin" else fields[0] / 1024 / 1024  # macOS reports bytes
    return maxrss, (fields[1] / 1024 if len(fields) > 1 else None)


def main() -> int:
    print(f"attnviz engine benchmark: {attnviz.DEFAULT_MODEL}, float32, CPU")
    print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()} (left at default)")
    print("ours = Model.forward(ids, keep=True) (every intermediate kept); "
          "transformers = eager forward, output_attentions=True; same ids, inference_mode, alternating")
    print(f"median of {', '.join(f'{RUNS[n]}@{n}' for n in SIZES)} runs after {WARMUP} warm-up runs each; "
          "ratio = median of per-run ratios")
    if hasattr(os, "getloadavg"):
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    peak, hwm = peak_memory_mb()  # first: the parent must be small when it forks the probe
    rows = speed_table()
    print(f"{'tokens':>6} | {'ours ms':>8} | {'transformers ms':>15} | {'ratio ours/theirs':>17}")
    print(f"{'-' * 6}-+-{'-' * 8}-+-{'-' * 15}-+-{'-' * 17}")
    worst = 0.0
    for n, ours_ms, theirs_ms, ratio, _, _ in rows:
        worst = max(worst, ratio)
        print(f"{n:>6} | {ours_ms:>8.2f} | {theirs_ms:>15.2f} | {ratio:>17.2f}")
    print(f"\nworst ratio {worst:.2f} (target <= {RATIO_TARGET}, limit {RATIO_LIMIT})")

    print("\nend to end, model.run(text, keep=True): tokenizer + forward + the attentions stacked into one (L, H, n, n) tensor")
    print(f"{'tokens':>6} | {'run ms':>8} | {'ratio run/transformers':>22}")
    for n, _, _, _, run_ms, run_ratio in rows:
        print(f"{n:>6} | {run_ms:>8.2f} | {run_ratio:>22.2f}")

    print(f"\npeak memory (ru_maxrss of a fresh process: load + one 512-token run with intermediates): "
          f"{peak:.0f} MiB (target <= {MEMORY_TARGET_MB} MiB)")
    if hwm is not None:
        print(f"(the same process's VmHWM: {hwm:.0f} MiB)")
    ok = worst <= RATIO_LIMIT and peak <= MEMORY_TARGET_MB
    print("\nOK" if ok else "\nOVER LIMIT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
