"""Reformer (LSH buckets): similar vectors hashed into the same bucket attend within it; Q is shared with K."""

from __future__ import annotations

from attnviz.engine.efficient import reformer_attention, reformer_scores_count
from attnviz.engine.efficient.reformer import MAX_ROUNDS
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import at_n, share, timed
from attnviz.lessons.efficient.method import Knob, Method


def scores(knobs: dict, n: int) -> int:
    return reformer_scores_count(n, knobs["buckets"], knobs["rounds"])


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    n = e.n
    count = scores(knobs, n)
    why = (f"{at_n(e)} Reformer computes {count:,} scores ({share(count, n * n)} of dense attention's: "
           f"{knobs['rounds']} rounds of chunks against their own and the previous chunk, {knobs['buckets']} "
           f"buckets), and each round also hashes, sorts and gathers all n positions and compares bucket ids "
           f"for every scored pair; it {timed(m, e)}")
    gpu = ("on a GPU sorting and gathering are fast parallel kernels but still extra passes over memory, "
           "so its gain shows at long texts (the paper's 64K tokens), where n² scores no longer fit")
    return why, gpu


def _largest_buckets(n: int) -> int:
    return max(1, n - n % 2) if n > 1 else 1


METHOD = Method(
    "reformer", "Reformer (LSH buckets)", False,
    "Hashes similar vectors into the same bucket and attends within buckets: cost about n·n/b, but "
    "pairs the hash splits are lost (more rounds cost more and lose fewer), and Q must equal K.",
    (Knob("buckets", "Buckets b (1 or even)", 1, _largest_buckets, 4, one_or_even=True),
     Knob("rounds", "Hashing rounds", 1, lambda n: MAX_ROUNDS, 2)),
    lambda q, k, v, kn, s: reformer_attention(q, v, kn["buckets"], kn["rounds"], scale=s),
    scores, explain, reference="shared-qk")
