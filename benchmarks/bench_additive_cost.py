"""Additive vs dot-product scoring: time and materialised memory against n, as the additive page measures them.

    python benchmarks/bench_additive_cost.py [d] [d_a]
Prints one row per n: the fastest of 5 runs (one CPU thread) for scores + softmax, and the size of the
score tensor each one builds ((n, n, d_a) for additive, (n, n) for dot-product).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attnviz.lessons.additive.cost import measure_cost


def main() -> None:
    d = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    d_a = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    cost = measure_cost(d=d, d_a=d_a)
    print(f"d = {d}, d_a = {d_a}; fastest of 5 runs on one CPU thread")
    print(f"{'n':>5} {'additive ms':>12} {'dot ms':>9} {'ratio':>7} {'additive MiB':>13} {'dot MiB':>9}")
    for n, ta, td, ba, bd in zip(cost.ns, cost.additive_seconds, cost.dot_seconds, cost.additive_bytes, cost.dot_bytes,
                                 strict=True):
        print(f"{n:>5} {ta * 1e3:>12.3f} {td * 1e3:>9.3f} {ta / td:>7.0f} {ba / 2**20:>13.3f} {bd / 2**20:>9.3f}")


if __name__ == "__main__":
    main()
