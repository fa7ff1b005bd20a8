"""Linformer: the n keys and values projected to k rows, so every query scores k summaries."""

from __future__ import annotations

from attnviz.engine.efficient import linformer_attention
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import at_n, held, share, timed
from attnviz.lessons.efficient.method import Knob, Method, Switch


def scores(knobs: dict, n: int) -> int:
    return n * knobs["rank"]  # n queries × k projected keys


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    n, k = e.n, knobs["rank"]
    count = scores(knobs, n)
    why = (f"{at_n(e)} Linformer computes n × k = {count:,} scores ({share(count, n * n)} of dense attention's) "
           f"against k = {k} projected keys, so its time and memory grow like n·k, and it {timed(m, e)} "
           f"and {held(m, e)}")
    gpu = ("on a GPU it is the same few large matrix products, so the trade stays n·k against n², with both "
           "sides faster")
    return why, gpu


METHOD = Method(
    "linformer", "Linformer (low-rank keys and values)", False,
    "Squeezes the n keys and values into k summaries: cost n·k, but a token can no longer single out "
    "one other token, only blends of them (and no causal mask).",
    (Knob("rank", "Rank k (rows the keys and values are projected to)", 1, lambda n: n, 8),),
    lambda q, k, v, kn, s: linformer_attention(q, k, v, kn["rank"], projection=kn.get("projection", "pooled"), scale=s),
    scores, explain,
    switches=(Switch("projection", "Projections E, F", ("pooled", "random"),
                     help="pooled: each row averages a segment of about n/k tokens (the identity at k = n); "
                          "random: Gaussian entries N(0, 1/k), seed 0."),),
    signed=lambda kn: kn.get("projection") == "random")  # random projections mix with negative weights
