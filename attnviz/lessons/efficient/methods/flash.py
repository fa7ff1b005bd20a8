"""Tiled exact attention (Flash Attention): the n × n scores in B × B tiles with a running softmax."""

from __future__ import annotations

from attnviz.engine.efficient import flash_attention
from attnviz.lessons.efficient.cost_point import CostPoint
from attnviz.lessons.efficient.explain import held, timed
from attnviz.lessons.efficient.method import Knob, Method
from attnviz.lessons.efficient.tiles import tile_sizes_for

MIN_TIMING_TILE = 128  # the cost chart's tiles: smaller ones time Python's loop, not the arithmetic


def scores(knobs: dict, n: int) -> int:
    return n * n  # every tile of the n × n matrix (no mask on the cost chart): the same arithmetic as dense


def explain(knobs: dict, m: CostPoint, e: CostPoint) -> tuple[str, str]:
    n, B = e.n, knobs["tile"]
    tiles = (-(-n // B)) ** 2
    why = (f"At n = {n:,} on this CPU tiled attention computes all {n * n:,} scores, as dense attention does, but as "
           f"{tiles:,} tiles of {B} × {B} walked by a Python loop with an online-softmax update after each"
           + (", overhead on top of the same arithmetic, so it " if m.seconds > e.seconds else ", and it ")
           + f"{timed(m, e)} while it {held(m, e)}")
    gpu = ("a fused GPU kernel (FlashAttention) runs the whole loop in one launch, keeps each tile in on-chip "
           "SRAM and never writes the n × n matrix to HBM, which is where its speed on GPUs comes from")
    return why, gpu


METHOD = Method(
    "flash", "Tiled exact attention (Flash Attention)", True,
    "Gives up nothing in the result: it trades one big score matrix for many small tiles and a running "
    "softmax, so memory grows like n while the arithmetic stays n².",
    (Knob("tile", "Tile size B (queries and keys per tile)", 1, lambda n: n, 16, choices=tile_sizes_for,
          timing_low=MIN_TIMING_TILE,
          timing_note=f"Tiles are at least {MIN_TIMING_TILE} here: smaller ones would time Python's loop."),),
    lambda q, k, v, kn, s: flash_attention(q, k, v, scale=s, block_size=kn["tile"]),
    scores, explain)
