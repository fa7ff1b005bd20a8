"""What each scoring costs as n grows: wall time in this process, and the size of what it materialises.

Additive builds tanh(W q_i + U k_j) for every pair, (n, n, d_a) floats; dot-product builds Q Kᵀ, (n, n).
Times are the fastest of a few repeats on one CPU thread of whatever machine runs this (one thread keeps a
shared machine's noise down): compare the shapes of the curves, not the numbers with another machine's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError
from attnviz.lessons.additive.scoring import additive_scores, one_thread, seeded_additive_weights

MAX_COST_N = 512  # the additive (n, n, d_a) tensor at n = 512, d_a = 64 is 64 MiB, twice over (sum, then tanh)
COST_NS = (8, 16, 32, 64, 128, 256, 512)
FLOAT_BYTES = 4


@dataclass
class Cost:
    ns: list[int]
    d: int
    d_a: int
    additive_seconds: list[float]
    dot_seconds: list[float]
    additive_bytes: list[int]  # the (n, n, d_a) float32 tensor additive scoring materialises
    dot_bytes: list[int]  # the (n, n) float32 score matrix dot-product materialises


def additive_intermediate_bytes(n_q: int, n_k: int, d_a: int) -> int:
    return n_q * n_k * d_a * FLOAT_BYTES


def dot_intermediate_bytes(n_q: int, n_k: int) -> int:
    return n_q * n_k * FLOAT_BYTES


def _fastest_seconds(fn, repeats: int) -> float:
    """The fastest of `repeats` timed calls: on a shared machine the slower ones measure other programs."""
    fn()  # warm-up: first calls pay for allocation and dispatch setup
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure_cost(ns=COST_NS, d: int = 64, d_a: int = 64, repeats: int = 5, seed: int = 0) -> Cost:
    """Scores + softmax, both ways, for each n: fastest of `repeats` runs in seconds, and intermediate bytes."""
    ns = [int(n) for n in ns]
    if not ns or min(ns) < 1 or max(ns) > MAX_COST_N:
        raise AttnvizError(f"Measure n between 1 and {MAX_COST_N}: larger additive tensors would not fit comfortably.")
    g = torch.Generator().manual_seed(seed)
    w = seeded_additive_weights(d, d, d_a, seed)
    add_s, dot_s = [], []
    with torch.inference_mode(), one_thread():
        for n in ns:
            q, k = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)
            add_s.append(_fastest_seconds(lambda q=q, k=k: torch.softmax(additive_scores(q, k, w), -1), repeats))
            dot_s.append(_fastest_seconds(lambda q=q, k=k: torch.softmax(q @ k.T * d**-0.5, -1), repeats))
    return Cost(ns, d, d_a, add_s, dot_s, [additive_intermediate_bytes(n, n, d_a) for n in ns],
                [dot_intermediate_bytes(n, n) for n in ns])


def cost_sentence(d: int, d_a: int) -> str:
    """How the two scorings' costs compare, in words: what grows alike, and what differs in practice."""
    return (f"Both grow like n², and alike: each of the n² (query, key) pairs costs work in proportion to a vector's "
            f"width, d = {d} multiply-adds for a dot product, d_a = {d_a} additions, tanh and multiply-adds for additive "
            f"(its W q_i and U k_j are computed once per token, not per pair), so their theoretical cost is similar. "
            f"What differs in practice: dot-product's n² scores come out of one matrix multiply, which processors "
            f"run very fast, while additive's per-pair tanh is elementwise work; and written plainly, as here, "
            f"additive first builds the whole (n, n, d_a) tensor of W q_i + U k_j, d_a = {d_a} times the memory of "
            f"the (n, n) score matrix (a loop or a fused kernel could avoid that tensor).")


WHY_DOT_PRODUCT_WON = (
    "- **One matrix multiply.** All n² scores come out of Q Kᵀ, the operation GPUs and CPUs are built to run fast; "
    "additive scoring needs a d_a-wide hidden layer and a tanh for every single (query, key) pair. The count of "
    "operations is similar; how fast they run is not.\n"
    "- **Less memory, as usually written.** Dot-product keeps an n × n matrix; additive, computed for all pairs at "
    "once, builds n × n × d_a numbers first.\n"
    "- **No extra weights.** W, U and v are parameters to learn; dot-product reuses the projections Q and K.\n"
    "- **The catch, and its fix.** Unscaled dot products grow with d_k and saturate the softmax; additive scores "
    "pass through tanh and stay bounded. Dividing by √d_k fixes that (see the Scaling lab).\n\n"
    "Additive attention was the scoring of RNN encoder–decoders for translation (Bahdanau et al., 2015): at each "
    "output step the decoder's hidden state was scored against every encoder state this way. The Transformer "
    "(Vaswani et al., 2017) chose scaled dot-product because it runs as matrix multiplies.")
