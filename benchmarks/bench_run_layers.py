"""What a page pays for one layer's pattern: model.run at 512 tokens with layers=1 against the forward's own time.

    python benchmarks/bench_run_layers.py [--device cpu|cuda] [--tokens 512]

model.run copies to the CPU only the layers it ran: with layers=1 one layer's (heads, n, n) weights (12 x 512 x 512
float32 = 12.6 MB for all-MiniLM-L6-v2), where a whole run stacks and copies all six (75 MB). Each line: the median
of several calls after a warm-up, the calls of all rows taken in turn so that a drift in the machine's load hits
every row alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

import torch

import attnviz
from benchmarks.bench_engine import body_words, ids_of_length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    model = attnviz.load_model(device=args.device)
    ids = ids_of_length(model, args.tokens).to(model.device)
    text = " ".join(body_words(args.tokens))
    sync = torch.cuda.synchronize if model.device.type == "cuda" else (lambda: None)

    def forward(n_layers=None):
        with torch.inference_mode():
            model.forward(ids, None, True, False, n_layers=n_layers)
        sync()

    rows = {
        f"forward, every layer ({model.n_layers})": lambda: forward(),
        "forward, layer 1 only": lambda: forward(1),
        "model.run(text)": lambda: model.run(text),
        "model.run(text, layers=1)": lambda: model.run(text, layers=1),
        "model.run(text, layers=1, weights_only=True)": lambda: model.run(text, layers=1, weights_only=True),
    }
    for fn in rows.values():
        fn(), fn()
    times = {name: [] for name in rows}
    for _ in range(args.runs):
        for name, fn in rows.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    base = statistics.median(times[next(iter(rows))])
    print(f"{model.name} on {model.device}, {args.tokens} tokens, torch threads {torch.get_num_threads()}, "
          f"median of {args.runs}")
    for name, ms in times.items():
        median = statistics.median(ms)
        print(f"  {name:48s} {median:8.2f} ms  ({median / base:4.2f} x the whole forward)")
    res = model.run(text, layers=1)
    print(f"  model.run(text, layers=1).attentions: {tuple(res.attentions.shape)} on {res.attentions.device}, "
          f"{res.attentions.numel() * 4 / 1e6:.1f} MB (a whole run's: "
          f"{model.n_layers * res.attentions.numel() * 4 / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
