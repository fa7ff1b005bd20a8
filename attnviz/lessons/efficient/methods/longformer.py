"""Global + local (Longformer): a sliding window for every token plus a few global tokens that see and are seen
by all."""

from __future__ import annotations

from attnviz.engine.efficient import global_local_attention, global_local_scores_count
from attnviz.engine.masks import global_local_mask
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import sparse_sentence
from attnviz.lessons.efficient.method import Knob, Method


def scores(knobs: dict, n: int) -> int:
    return global_local_scores_count(n, knobs["window"], knobs["globals"])


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    n, g = e.n, knobs["globals"]
    what = f"a band of ±{min(knobs['window'], n - 1)} keys plus {g} global token{'s' if g != 1 else ''}"
    return sparse_sentence("longformer", scores(knobs, n), what, "padded bands", m, e)


METHOD = Method(
    "longformer", "Global + local (Longformer)", True,
    "A window for everyone plus a few global tokens that see and are seen by all: near-linear cost, "
    "with long-range traffic squeezed through those few tokens.",
    (Knob("window", "Window w", 0, lambda n: max(n - 1, 0), 2),
     Knob("globals", "Global tokens (the first g positions)", 0, lambda n: n, 1)),
    lambda q, k, v, kn, s: global_local_attention(q, k, v, kn["window"], range(kn["globals"]), scale=s),
    scores, explain, reference="masked",
    mask=lambda n, kn: global_local_mask(n, min(kn["window"], n - 1), range(kn["globals"])))
