"""The methods the efficient-attention page offers: their knobs, limits, one-line trade, and how each runs.

Knob values from the page are capped into range here (with a note saying so); the engine itself raises
AttnvizError for values out of range, so nothing silently changes below the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import torch

from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.engine.efficient import (
    bigbird_layout,
    block_sparse_attention,
    flash_attention,
    global_local_attention,
    layout_mask,
    linformer_attention,
    performer_attention,
    reformer_attention,
    shared_qk_attention,
    sliding_window_attention,
)
from attnviz.engine.efficient.performer import MAX_FEATURES
from attnviz.engine.efficient.reformer import MAX_ROUNDS
from attnviz.engine.masks import global_local_mask, window_mask
from attnviz.lessons.efficient.tiles import tile_sizes_for

# The page's cap on the Performer's random features: the cost chart times the page's m at n up to 4,096 tokens, where
# the engine's own cap (MAX_FEATURES, 65,536) would hold two 4,096 x 65,536 feature matrices (2 GB) and take minutes;
# 4,096 features hold 64 MB each, about what exact attention's scores hold there.
PAGE_MAX_FEATURES = min(4096, MAX_FEATURES)
MIN_TIMING_TILE = 128  # the cost chart's tiles: smaller ones time Python's loop, not the arithmetic


@dataclass(frozen=True)
class Knob:
    key: str  # the name in the knobs dict (and, prefixed, the widget key)
    label: str
    low: int
    high: Callable[[int], int]  # the largest sensible value for n tokens
    default: int  # the value asked for when nothing else is known; knob_default(knob, n) is the one for n tokens
    help: str = ""
    choices: Callable[[int], tuple[list[int], int]] | None = None  # n -> (the values offered, the default), if a list


@dataclass(frozen=True)
class Method:
    key: str  # a short name (it goes into the URL)
    title: str
    exact: bool  # True: equals exact attention (with its mask); False: an approximation
    trade: str  # one line: what it gives up for what
    knobs: tuple[Knob, ...]
    run: Callable  # (q, k, v, knobs: dict, scale) -> output (..., n, d_v)
    reference: str = "full"  # what it is compared with: "full", "masked" (its own mask), "shared-qk"


PAGE_LAYOUT = {"local": 1, "n_global": 1, "n_random": 1, "seed": 0}  # block-sparse: ±1 band, 1 global, 1 random block


@lru_cache(maxsize=32)
def page_layout(n: int, block: int) -> torch.Tensor:
    """The page's BigBird-like layout for n tokens in blocks of `block` (⌈n/block⌉ square, bool; never mutated).

    Cached: drawing the random blocks row by row takes longer than the kernel itself at n = 4096, B = 4,
    and the cost chart times the kernel."""
    return bigbird_layout(-(-n // block), **PAGE_LAYOUT)


def _reformer_buckets(n: int) -> int:
    return max(1, n - n % 2) if n > 1 else 1


METHODS: dict[str, Method] = {m.key: m for m in (
    Method("flash", "Tiled exact attention (Flash Attention)", True,
           "Gives up nothing in the result: it trades one big score matrix for many small tiles and a running "
           "softmax, so memory grows like n while the arithmetic stays n².",
           (Knob("tile", "Tile size B (queries and keys per tile)", 1, lambda n: n, 16, choices=tile_sizes_for),),
           lambda q, k, v, kn, s: flash_attention(q, k, v, scale=s, block_size=kn["tile"])),
    Method("window", "Sliding window (local attention)", True,
           "Each token sees only its 2w + 1 neighbours: cost grows like n·w, and anything farther than w "
           "away is simply out of reach in this layer.",
           (Knob("window", "Window w (keys at most this far away)", 0, lambda n: max(n - 1, 0), 2),),
           lambda q, k, v, kn, s: sliding_window_attention(q, k, v, kn["window"], scale=s), "masked"),
    Method("longformer", "Global + local (Longformer)", True,
           "A window for everyone plus a few global tokens that see and are seen by all: near-linear cost, "
           "with long-range traffic squeezed through those few tokens.",
           (Knob("window", "Window w", 0, lambda n: max(n - 1, 0), 2),
            Knob("globals", "Global tokens (the first g positions)", 0, lambda n: n, 1)),
           lambda q, k, v, kn, s: global_local_attention(q, k, v, kn["window"], range(kn["globals"]), scale=s),
           "masked"),
    Method("block-sparse", "Block-sparse (BigBird-like blocks)", True,
           "Whole B × B blocks are computed or skipped (a band, one global block, one random block per row): "
           "hardware-friendly chunks of work, at the price of a coarse, fixed pattern.",
           (Knob("block", "Block size B", 1, lambda n: n, 4),),
           lambda q, k, v, kn, s: block_sparse_attention(q, k, v, page_layout(q.shape[-2], kn["block"]), kn["block"], scale=s),
           "masked"),
    Method("linformer", "Linformer (low-rank keys and values)", False,
           "Squeezes the n keys and values into k summaries: cost n·k, but a token can no longer single out "
           "one other token, only blends of them (and no causal mask).",
           (Knob("rank", "Rank k (rows the keys and values are projected to)", 1, lambda n: n, 8),),
           lambda q, k, v, kn, s: linformer_attention(q, k, v, kn["rank"], projection=kn.get("projection", "pooled"),
                                                      scale=s)),
    Method("performer", "Performer (FAVOR+ random features)", False,
           "Replaces the softmax kernel by m positive random features: cost n·m and no n × n matrix, paid "
           "for with random error that shrinks only like 1/√m and grows with the size of q and k.",
           (Knob("features", "Random features m", 1, lambda n: PAGE_MAX_FEATURES, 64),),
           lambda q, k, v, kn, s: performer_attention(q, k, v, kn["features"], scale=s)),
    Method("reformer", "Reformer (LSH buckets)", False,
           "Hashes similar vectors into the same bucket and attends within buckets: cost about n·n/b, but "
           "pairs the hash splits are lost (more rounds cost more and lose fewer), and Q must equal K.",
           (Knob("buckets", "Buckets b (1 or even)", 1, _reformer_buckets, 4),
            Knob("rounds", "Hashing rounds", 1, lambda n: MAX_ROUNDS, 2)),
           lambda q, k, v, kn, s: reformer_attention(q, v, kn["buckets"], kn["rounds"], scale=s), "shared-qk"),
)}


def cap_knobs(method: Method, values: dict, n: int) -> tuple[dict, list[str]]:
    """Knob values clamped into [low, high(n)] (and Reformer's buckets made even) -> (values, notes on what changed)."""
    capped, notes = dict(values), []
    for knob in method.knobs:
        raw = int(values.get(knob.key, knob.default))
        value = min(max(raw, knob.low), max(knob.high(n), knob.low))
        if knob.key == "buckets" and value > 1 and value % 2:
            value -= 1
        if value != raw:
            even = ", 1 or even" if knob.key == "buckets" else ""
            notes.append(f"{knob.label.split(' (')[0]}: {raw} is not allowed for n = {n} "
                         f"(allowed {knob.low} to {max(knob.high(n), knob.low)}{even}), so {value} is used.")
        capped[knob.key] = value
    return capped, notes


def knob_default(knob: Knob, n: int) -> int:
    """The value a knob starts on for n tokens: always allowed at n, so a fresh page warns about nothing.

    A knob with a list of choices starts on its own default (the tile: about n/4, several tiles); the
    others start on their default clamped into [low, high(n)] (Reformer's buckets made 1 or even)."""
    if knob.choices is not None:
        return knob.choices(n)[1]
    value = min(max(knob.default, knob.low), max(knob.high(n), knob.low))
    return value - 1 if knob.key == "buckets" and value > 1 and value % 2 else value


def knob_defaults(method: Method, n: int) -> dict:
    """{knob key: knob_default} for every knob of the method at n tokens."""
    return {knob.key: knob_default(knob, n) for knob in method.knobs}


def reference_output(method: Method, q, k, v, knobs: dict, scale) -> torch.Tensor:
    """What the method is measured against: exact attention (full), its own mask applied densely, or shared-QK."""
    if method.reference == "shared-qk":
        return shared_qk_attention(q, v, scale=scale)
    return scaled_dot_product_attention(q, k, v, mask=dense_mask(method, q.shape[-2], knobs), scale=scale)[0]


def dense_mask(method: Method, n: int, knobs: dict) -> torch.Tensor | None:
    """The (n, n) mask a sparse method stands for (None for methods that see every key)."""
    if method.key == "window":
        return window_mask(n, min(knobs["window"], n - 1))
    if method.key == "longformer":
        return global_local_mask(n, min(knobs["window"], n - 1), range(knobs["globals"]))
    if method.key == "block-sparse":
        return layout_mask(page_layout(n, knobs["block"]), knobs["block"], n)
    return None


def timing_knobs(method: Method, knobs: dict, n: int) -> dict:
    """The knobs the cost chart uses at n tokens: the page's, capped for n (and tiles at least MIN_TIMING_TILE)."""
    capped, _ = cap_knobs(method, knobs, n)
    if method.key == "flash":
        capped["tile"] = min(max(capped["tile"], MIN_TIMING_TILE), n)
    return capped
