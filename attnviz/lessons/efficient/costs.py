"""Time and peak tensor memory of a method against exact attention as n grows, measured in this process."""

from __future__ import annotations

import torch

from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.engine.efficient.measure import peak_tensor_bytes, seconds
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.method import Method, timing_knobs

MAX_COST_N = 4096  # the largest n the page times on this CPU (dense exact then holds ~200 MB of scores)
COST_NS = (128, 256, 512, 1024, 2048, 4096)
COST_D = 64  # head size of the random Q, K, V the chart times


def cost_ns(max_n: int) -> tuple[list[int], bool]:
    """The n's to time up to max_n -> (ns, capped): max_n above MAX_COST_N is capped to it."""
    capped = max_n > MAX_COST_N
    top = min(max_n, MAX_COST_N)
    return [n for n in COST_NS if n <= top] or [COST_NS[0]], capped


def _qkv(n: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, n, COST_D, generator=g) for _ in range(3))


def measure(fn, repeats: int) -> tuple[float, int]:
    return seconds(fn, repeats=repeats, budget=1.0), peak_tensor_bytes(fn)


def exact_costs(ns: list[int], repeats: int = 3) -> list[CostPoint]:
    """Dense exact attention softmax(Q Kᵀ/√d) V at each n."""
    points = []
    for n in ns:
        q, k, v = _qkv(n)
        t, b = measure(lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v)[0], repeats)
        points.append(CostPoint(n, t, b))
    return points


def method_costs(method: Method, knobs: dict, ns: list[int], repeats: int = 3) -> list[CostPoint]:
    """The method at each n, with its knobs capped for that n (timing_knobs)."""
    points = []
    for n in ns:
        q, k, v = _qkv(n)
        kn = timing_knobs(method, knobs, n)
        t, b = measure(lambda q=q, k=k, v=v, kn=kn: method.run(q, k, v, kn, None), repeats)
        points.append(CostPoint(n, t, b))
    return points


def overtakes_at(method: list[CostPoint], exact: list[CostPoint], field: str) -> int | None:
    """The smallest measured n from which the method is below exact at every larger measured n (None: never)."""
    n_from = None
    for m, e in zip(method, exact, strict=True):
        if getattr(m, field) < getattr(e, field):
            n_from = m.n if n_from is None else n_from
        else:
            n_from = None
    return n_from


def ratio_words(exact: float, method: float, better: str, worse: str) -> str:
    """'4.2× faster' when the method's figure is below exact's, '3.1× slower' when above."""
    if method <= 0 or exact <= 0:
        return "not measurable"
    return f"{exact / method:.1f}× {better}" if method <= exact else f"{method / exact:.1f}× {worse}"
