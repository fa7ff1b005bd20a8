"""Block-sparse attention (BigBird-like blocks): whole B × B blocks of the score matrix computed or skipped."""

from __future__ import annotations

from functools import lru_cache

import torch

from attnviz.engine.efficient import bigbird_layout, block_sparse_attention, block_sparse_scores_count, layout_mask
from attnviz.engine.efficient.sparse import wide_query_blocks
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import sparse_sentence
from attnviz.lessons.efficient.method import Knob, Method

PAGE_LAYOUT = {"local": 1, "n_global": 1, "n_random": 1, "seed": 0}  # ±1 band, 1 global, 1 random block


@lru_cache(maxsize=32)
def page_layout(n: int, block: int) -> torch.Tensor:
    """The page's BigBird-like layout for n tokens in blocks of `block` (⌈n/block⌉ square, bool; never mutated).

    Cached: drawing the random blocks row by row takes longer than the kernel itself at n = 4096, B = 4,
    and the cost chart times the kernel."""
    return bigbird_layout(-(-n // block), **PAGE_LAYOUT)


def scores(knobs: dict, n: int) -> int:
    return block_sparse_scores_count(page_layout(n, knobs["block"]), knobs["block"], n)


def blocks_described(knobs: dict, n: int) -> str:
    """'blocks of 4 × 4: 1 global query block against all keys, the other 1,023 with 4.8 key blocks on average'."""
    B = min(knobs["block"], n)
    layout = page_layout(n, knobs["block"])
    wide = wide_query_blocks(layout)
    rest = layout.sum(-1)[~wide]
    g = int(wide.sum())
    part = f"{g} global query block{'s' if g != 1 else ''} against all keys"
    if len(rest):
        part += f", the other {len(rest):,} with {float(rest.float().mean()):.2g} key blocks on average"
    return f"blocks of {B} × {B}: {part}"


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    return sparse_sentence("block-sparse", scores(knobs, e.n), blocks_described(knobs, e.n), "gathering blocks", m, e)


METHOD = Method(
    "block-sparse", "Block-sparse (BigBird-like blocks)", True,
    "Whole B × B blocks are computed or skipped (a band, one global block, one random block per row): "
    "hardware-friendly chunks of work, at the price of a coarse, fixed pattern.",
    (Knob("block", "Block size B", 1, lambda n: n, 4),),
    lambda q, k, v, kn, s: block_sparse_attention(q, k, v, page_layout(q.shape[-2], kn["block"]), kn["block"], scale=s),
    scores, explain, reference="masked",
    mask=lambda n, kn: layout_mask(page_layout(n, kn["block"]), kn["block"], n))
