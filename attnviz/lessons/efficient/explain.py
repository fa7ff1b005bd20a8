"""Why a method costs what it cost on this CPU, and what a GPU kernel would change: one sentence a method.

Every comparison in a sentence (faster, slower, a share of the scores or of the memory) is computed from
the points measured in this process and from the scores the method's code computes (its `scores`); the
words are chosen after the numbers, so a sentence stays true on another machine. What is said about GPUs is
about how GPU kernels for the method work, not a measurement: this process has no GPU.

Each method's own words live in its module (methods/<name>.py, its `explain`); the pieces they share are here.
"""

from __future__ import annotations

from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.costs import ratio_words
from attnviz.lessons.efficient.method import Method

SPARSE_GPU = ("on a GPU the saving needs a kernel that skips the forbidden blocks (block-sparse kernels such as "
              "BigBird's or Triton's), because dense attention with the same mask still computes all n² scores there")


def share(part: float, whole: float) -> str:
    """'0.59 %' / '12 %' / '100 %': part / whole as a percentage, two significant figures below 10 %."""
    pct = 100 * part / whole
    return f"{pct:.2g} %" if pct < 10 else f"{pct:.0f} %"


def at_n(e: CostPoint) -> str:
    """'At n = 4,096 on this CPU': how every sentence starts."""
    return f"At n = {e.n:,} on this CPU"


def timed(m: CostPoint, e: CostPoint) -> str:
    """'ran 3.1× slower than dense attention (512.0 ms against 165.0 ms)', from the two measured points."""
    return (f"ran {ratio_words(e.seconds, m.seconds, 'faster', 'slower')} than dense attention "
            f"({m.seconds * 1e3:.1f} ms against {e.seconds * 1e3:.1f} ms)")


def held(m: CostPoint, e: CostPoint) -> str:
    return (f"held {m.peak_bytes / e.peak_bytes:.2g}× dense attention's peak memory" if e.peak_bytes > 0
            else "held no measurable memory")


def sparse_sentence(key: str, scores: int, what: str, overhead: str, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    """The sentence of a method that skips masked-out pairs: the scores it computed for `what`, its time, and
    (when it computed fewer scores yet took longer) that the time went to `overhead`."""
    n = e.n
    why = (f"{at_n(e)} {key} computes {scores:,} scores ({share(scores, n * n)} of dense attention's "
           f"{n * n:,}) for {what}, and it {timed(m, e)}"
           + (f"; it computes fewer scores yet took longer, so the time went to the work around them ({overhead}, "
              "masks, many small products)" if m.seconds > e.seconds and scores < n * n else ""))
    return why, SPARSE_GPU


def cost_sentence(method: Method, knobs: dict, method_pts: list[CostPoint], exact_pts: list[CostPoint]) -> str:
    """One sentence: what the method computed at the largest measured n, how that compared here, and the GPU side.

    knobs: the ones the cost chart timed with at that n (method.timing_knobs). The points: costs.method_costs
    and costs.exact_costs at the same n's.
    """
    why, gpu = method.explain(knobs, method_pts[-1], exact_pts[-1])
    return f"{why}; {gpu}."
