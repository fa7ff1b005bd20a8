"""Sliding window (local attention): each token sees the keys at most w positions away, band by band."""

from __future__ import annotations

from attnviz.engine.efficient import band_scores_count, sliding_window_attention
from attnviz.engine.masks import window_mask
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import sparse_sentence
from attnviz.lessons.efficient.method import Knob, Method


def scores(knobs: dict, n: int) -> int:
    return band_scores_count(n, knobs["window"])


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    n = e.n
    return sparse_sentence("window", scores(knobs, n), f"a band of ±{min(knobs['window'], n - 1)} keys",
                           "padded bands", m, e)


METHOD = Method(
    "window", "Sliding window (local attention)", True,
    "Each token sees only its 2w + 1 neighbours: cost grows like n·w, and anything farther than w "
    "away is simply out of reach in this layer.",
    (Knob("window", "Window w (keys at most this far away)", 0, lambda n: max(n - 1, 0), 2),),
    lambda q, k, v, kn, s: sliding_window_attention(q, k, v, kn["window"], scale=s),
    scores, explain, reference="masked",
    mask=lambda n, kn: window_mask(n, min(kn["window"], n - 1)))
