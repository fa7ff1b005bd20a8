"""Why a method costs what it cost on this CPU, and what a GPU kernel would change: one sentence a method.

Every comparison in a sentence (faster, slower, a share of the scores or of the memory) is computed from
the points measured in this process and from the scores the method's code computes (work.py); the words
are chosen after the numbers, so a sentence stays true on another machine. What is said about GPUs is
about how GPU kernels for the method work, not a measurement: this process has no GPU.
"""

from __future__ import annotations

from attnviz.lessons.efficient.costs import CostPoint, ratio_words
from attnviz.lessons.efficient.methods import Method, page_layout
from attnviz.lessons.efficient.work import features_computed, scores_computed

SPARSE_GPU = ("on a GPU the saving needs a kernel that skips the forbidden blocks (block-sparse kernels such as "
              "BigBird's or Triton's), because dense attention with the same mask still computes all n² scores there")


def _share(part: float, whole: float) -> str:
    """'0.59 %' / '12 %' / '100 %': part / whole as a percentage, two significant figures below 10 %."""
    pct = 100 * part / whole
    return f"{pct:.2g} %" if pct < 10 else f"{pct:.0f} %"


def _timed(m: CostPoint, e: CostPoint) -> str:
    """'ran 3.1× slower than dense attention (512.0 ms against 165.0 ms)', from the two measured points."""
    return (f"ran {ratio_words(e.seconds, m.seconds, 'faster', 'slower')} than dense attention "
            f"({m.seconds * 1e3:.1f} ms against {e.seconds * 1e3:.1f} ms)")


def _held(m: CostPoint, e: CostPoint) -> str:
    return (f"held {m.peak_bytes / e.peak_bytes:.2g}× dense attention's peak memory" if e.peak_bytes > 0
            else "held no measurable memory")


def cost_sentence(method: Method, knobs: dict, method_pts: list[CostPoint], exact_pts: list[CostPoint]) -> str:
    """One sentence: what the method computed at the largest measured n, how that compared here, and the GPU side.

    knobs: the ones the cost chart timed with at that n (methods.timing_knobs). The points: costs.method_costs
    and costs.exact_costs at the same n's.
    """
    m, e = method_pts[-1], exact_pts[-1]
    n = e.n
    slower = m.seconds > e.seconds
    scores = scores_computed(method, knobs, n)
    head = f"At n = {n:,} on this CPU"
    if method.key == "flash":
        B = knobs["tile"]
        tiles = (-(-n // B)) ** 2
        why = (f"{head} tiled attention computes all {n * n:,} scores, as dense attention does, but as {tiles:,} tiles "
               f"of {B} × {B} walked by a Python loop with an online-softmax update after each"
               + (", overhead on top of the same arithmetic, so it " if slower else ", and it ")
               + f"{_timed(m, e)} while it {_held(m, e)}")
        gpu = ("a fused GPU kernel (FlashAttention) runs the whole loop in one launch, keeps each tile in on-chip "
               "SRAM and never writes the n × n matrix to HBM, which is where its speed on GPUs comes from")
    elif method.key in ("window", "longformer", "block-sparse"):
        if method.key == "block-sparse":
            what = _blocks(knobs, n)
        else:
            what = f"a band of ±{min(knobs['window'], n - 1)} keys"
            g = knobs["globals"] if method.key == "longformer" else 0
            what += f" plus {g} global token{'s' if g != 1 else ''}" if method.key == "longformer" else ""
        why = (f"{head} {method.key} computes {scores:,} scores ({_share(scores, n * n)} of dense attention's "
               f"{n * n:,}) for {what}, and it {_timed(m, e)}"
               + ("; it computes fewer scores yet took longer, so the time went to the work around them "
                  f"({'gathering blocks' if method.key == 'block-sparse' else 'padded bands'}, masks, many small "
                  "products)" if slower and scores < n * n else ""))
        gpu = SPARSE_GPU
    elif method.key == "linformer":
        k = knobs["rank"]
        why = (f"{head} Linformer computes n × k = {scores:,} scores ({_share(scores, n * n)} of dense attention's) "
               f"against k = {k} projected keys, so its time and memory grow like n·k, and it {_timed(m, e)} "
               f"and {_held(m, e)}")
        gpu = ("on a GPU it is the same few large matrix products, so the trade stays n·k against n², with both "
               "sides faster")
    elif method.key == "performer":
        f = features_computed(method, knobs, n)
        why = (f"{head} Performer computes no scores at all but {f:,} positive random features (n × m for Q and "
               f"for K, m = {knobs['features']}), so its time and memory grow like n·m, and it {_timed(m, e)} and "
               f"{_held(m, e)}")
        gpu = ("on a GPU it is the same few large matrix products and exponentials, so the trade stays n·m "
               "against n², with both sides faster")
    elif method.key == "reformer":
        why = (f"{head} Reformer computes {scores:,} scores ({_share(scores, n * n)} of dense attention's: "
               f"{knobs['rounds']} rounds of chunks against their own and the previous chunk, {knobs['buckets']} "
               f"buckets), and each round also hashes, sorts and gathers all n positions and compares bucket ids "
               f"for every scored pair; it {_timed(m, e)}")
        gpu = ("on a GPU sorting and gathering are fast parallel kernels but still extra passes over memory, "
               "so its gain shows at long texts (the paper's 64K tokens), where n² scores no longer fit")
    else:
        raise ValueError(f"no cost sentence for method {method.key!r}")
    return f"{why}; {gpu}."


def _blocks(knobs: dict, n: int) -> str:
    """'blocks of 4 × 4: 1 global query block against all keys, the other 1,023 with 4.8 key blocks on average'."""
    B = min(knobs["block"], n)
    layout = page_layout(n, knobs["block"])
    nb = layout.shape[0]
    counts = layout.sum(-1)
    wide = 2 * counts > nb
    rest = counts[~wide]
    g = int(wide.sum())
    part = f"{g} global query block{'s' if g != 1 else ''} against all keys"
    if len(rest):
        part += f", the other {len(rest):,} with {float(rest.float().mean()):.2g} key blocks on average"
    return f"blocks of {B} × {B}: {part}"
