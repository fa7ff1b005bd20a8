"""Performer (FAVOR+): the softmax kernel replaced by m positive random features; no n × n matrix at all."""

from __future__ import annotations

from attnviz.engine.efficient import performer_attention
from attnviz.engine.efficient.performer import MAX_FEATURES
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import at_n, held, timed
from attnviz.lessons.efficient.method import Knob, Method

# The page's cap on the random features: the cost chart times the page's m at n up to 4,096 tokens, where the
# engine's own cap (MAX_FEATURES, 65,536) would hold two 4,096 x 65,536 feature matrices (2 GB) and take minutes;
# 4,096 features hold 64 MB each, about what exact attention's scores hold there.
PAGE_MAX_FEATURES = min(4096, MAX_FEATURES)


def scores(knobs: dict, n: int) -> None:
    return None  # it forms no scores q·k: see features


def features(knobs: dict, n: int) -> int:
    """Its positive random features: n × m for Q and n × m for K."""
    return 2 * n * knobs["features"]


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    why = (f"{at_n(e)} Performer computes no scores at all but {features(knobs, e.n):,} positive random features "
           f"(n × m for Q and for K, m = {knobs['features']}), so its time and memory grow like n·m, and it "
           f"{timed(m, e)} and {held(m, e)}")
    gpu = ("on a GPU it is the same few large matrix products and exponentials, so the trade stays n·m "
           "against n², with both sides faster")
    return why, gpu


METHOD = Method(
    "performer", "Performer (FAVOR+ random features)", False,
    "Replaces the softmax kernel by m positive random features: cost n·m and no n × n matrix, paid "
    "for with random error that shrinks only like 1/√m and grows with the size of q and k.",
    (Knob("features", "Random features m", 1, lambda n: PAGE_MAX_FEATURES, 64),),
    lambda q, k, v, kn, s: performer_attention(q, k, v, kn["features"], scale=s),
    scores, explain)
