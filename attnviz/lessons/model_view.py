"""The model view: every layer × head of a run as a grid of thumbnails (rows = layers, cols = heads).

Bytes matter: a 6 × 12 model at 512 tokens has 72 · 512² ≈ 19 million weights. So the thumbnails
(drawn by ui/heatmap.heatmap_grid(..., thumbnails=True): one canvas, uint8 cells, no token labels)
are pooled above `max_cells` tokens into b × b blocks:
    P[I, J] = (1/|I|) Σ_{i∈I} Σ_{j∈J} a_ij
the weight an average query of block I gives to the keys of block J, so every pooled row still sums
to 1 and the shared 0..1 colour scale keeps its meaning. The enlarged head shows every token.
Thumbnail p is layer p // H, head p % H (layer-major, as `thumbnails` returns them).
"""

from __future__ import annotations

import math

import numpy as np

from attnviz.draw.value_map import value_map_html
from attnviz.errors import AttnvizError

THUMBNAIL_CELLS = 32  # at most this many cells per side on a thumbnail

STATISTICS = {  # column of attnviz.analysis.stats.head_statistics -> what the map's colours say
    "entropy": "mean row entropy (nats)",
    "max_weight": "mean largest weight in a row",
    "mean_distance": "mean attention distance (tokens)",
    "to_cls_sep_first": "share to [CLS]/[SEP]/first token (sinks)",
    "to_self": "share to the token itself",
    "to_previous": "share to the previous token",
}
# rollout is drawn on the weights' 0..1 scale (its rows sum to 1 too) but it is no weight after softmax
ROLLOUT_VALUE = ("rollout: share of the input token (column) in the position (row); rows sum to 1", "rollout share")
STATISTICS_TEXT = (
    "Entropy says how spread out a head's rows are; mean distance how far it looks; the shares say how much weight "
    "goes to the sink tokens ([CLS], [SEP] or the first token), to the token itself and to the token just before. "
    "Heads that park their weight on a sink often have nothing useful to add. The three shares are means over the "
    "same query rows, 1 … n − 1 (row 0 has no token before it), so *to self* + *to previous* is at most 1; a sink can "
    "also be the token itself or the one before, so *to sinks* overlaps them. Entropy, max weight and distance are "
    "means over every row.")
STATISTICS_SHORT = {  # table headers narrow enough not to be cut at 1024 px; the long names go in the help
    "entropy": "entropy", "max_weight": "max weight", "mean_distance": "distance", "to_cls_sep_first": "to sinks",
    "to_self": "to self", "to_previous": "to previous",
}


def pooled_block_size(n: int, max_cells: int = THUMBNAIL_CELLS) -> int:
    """b = ⌈n / max_cells⌉: how many tokens a thumbnail cell stands for along each side (1 = every token)."""
    if max_cells < 1:
        raise AttnvizError(f"A thumbnail needs at least one cell per side, got max_cells = {max_cells}.")
    return max(1, math.ceil(n / max_cells))


def pool_patterns(attentions, block: int) -> np.ndarray:
    """Pool (..., n, n) patterns into b × b blocks, keeping row sums: (..., n, n) -> (..., m, m), m = ⌈n/b⌉.

    P[I, J] = mean over the queries i of block I of Σ_{j ∈ J} a_ij. Rows are averaged (a query block
    behaves like its average query) and keys are summed (weight given to any key of the block), so
    each pooled row sums to what its queries' rows sum to: 1. A short last block averages only the
    queries it has.
    """
    a = np.asarray(attentions, dtype=np.float32)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise AttnvizError(f"Pooling needs square patterns (..., n, n), got shape {a.shape}.")
    if block <= 1:
        return a
    n = a.shape[-1]
    m = math.ceil(n / block)
    lead = a.shape[:-2]
    if n % block:  # zero rows/cols pad to a multiple of b (not copied when n already is one)
        padded = np.zeros((*lead, m * block, m * block), dtype=np.float32)
        padded[..., :n, :n] = a
        a = padded
    # keys first, along the contiguous axis, then queries: one sum over both strided axes took 5x as long
    keys = a.reshape(*lead, m * block, m, block).sum(axis=-1)  # Σ_{j∈J} a_ij  (..., m·b, m)
    sums = keys.reshape(*lead, m, block, m).sum(axis=-2)  # Σ_{i∈I} of those  (..., m, m)
    rows_per_block = np.minimum(block, n - np.arange(m) * block).astype(np.float32)  # |I|, the last may be short (m,)
    return sums / rows_per_block[:, None]  # (..., m, m)


def pooled_labels(labels: list[str], block: int) -> list[str]:
    """A label per pooled cell: the block's first token, with '…' when the cell stands for several."""
    if block <= 1:
        return list(labels)
    return [f"{labels[i]}…" for i in range(0, len(labels), block)]


def thumbnails(attentions, labels: list[str], max_cells: int = THUMBNAIL_CELLS) -> tuple[np.ndarray, list[str], int]:
    """Every head of every layer for a grid of thumbnails: (L, H, n, n) -> ((L·H, m, m) pooled patterns in
    layer-major order, their m labels, block b). Pooled rows still sum to 1 (see pool_patterns)."""
    a = np.asarray(attentions, dtype=np.float32)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise AttnvizError(f"The model view needs attentions of shape (layers, heads, n, n), got {a.shape}.")
    if len(labels) != a.shape[-1]:
        raise AttnvizError(f"There are {len(labels)} token labels but the patterns are {a.shape[-1]}×{a.shape[-1]}.")
    block = pooled_block_size(a.shape[-1], max_cells)
    pooled = pool_patterns(a, block)  # (L, H, m, m)
    m = pooled.shape[-1]
    return pooled.reshape(-1, m, m), pooled_labels(labels, block), block  # (L·H, m, m)


def thumbnail_titles(n_layers: int, n_heads: int) -> list[str]:
    """'L0 H0', 'L0 H1', ... in layer-major order (short enough for a 50 px thumbnail; the enlarged head is
    marked by the grid's frame, not in its title)."""
    return [f"L{layer} H{head}" for layer in range(n_layers) for head in range(n_heads)]


def thumbnail_names(n_layers: int, n_heads: int) -> list[str]:
    """'layer 0, head 0', ... in thumbnail_titles' order: what a screen reader hears with each thumbnail's cells."""
    return [f"layer {layer}, head {head}" for layer in range(n_layers) for head in range(n_heads)]


def thumbnail_of(layer: int, head: int, n_heads: int) -> int:
    """The panel index p of (layer, head) in the grid: p = layer · H + head."""
    return layer * n_heads + head


def head_of_thumbnail(panel: int, n_heads: int) -> tuple[int, int]:
    """(layer, head) of panel p in the grid: (p // H, p % H)."""
    return divmod(int(panel), n_heads)


def statistics_grid(rows: list[dict], statistic: str) -> np.ndarray:
    """One column of attnviz.analysis.stats.head_statistics as a (layers, heads) array."""
    if statistic not in STATISTICS:
        raise AttnvizError(f"Unknown head statistic {statistic!r}; choose one of {', '.join(STATISTICS)}.")
    n_layers = 1 + max(r["layer"] for r in rows)
    n_heads = 1 + max(r["head"] for r in rows)
    grid = np.zeros((n_layers, n_heads), dtype=np.float32)
    for r in rows:
        grid[r["layer"], r["head"]] = r[statistic]
    return grid  # (L, H)


def statistics_map(rows: list[dict], statistic: str) -> str:
    """A layer × head map of one head statistic, its value printed in each cell (HTML: see attnviz.draw.value_map)."""
    grid = statistics_grid(rows, statistic)  # (L, H)
    n_layers, n_heads = grid.shape
    return value_map_html(grid, [f"L{layer}" for layer in range(n_layers)], [f"H{h}" for h in range(n_heads)],
                          title=STATISTICS[statistic], row_name="layer", col_name="head", corner="layer \\ head")
