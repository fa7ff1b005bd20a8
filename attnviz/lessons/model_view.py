"""The model view: every layer × head of a run as thumbnails in ONE figure (rows = layers, cols = heads).

Bytes matter: a 6 × 12 model at 512 tokens has 72 · 512² ≈ 19 million weights. So
  - the figure is one plotly figure with one heatmap trace per head, laid out as a mosaic on a
    single pair of axes (72 subplots take seconds to draw in a browser; the mosaic, a fraction);
  - weights travel as uint16 thousandths (attnviz.draw.plotting.weights_as_thousandths);
  - thumbnails have no tick labels, and above `max_cells` tokens they are pooled into b × b blocks:
        P[I, J] = (1/|I|) Σ_{i∈I} Σ_{j∈J} a_ij
    the weight an average query of block I gives to the keys of block J, so every pooled row
    still sums to 1 and the shared 0..1 colour axis keeps its meaning. The enlarged head
    (attnviz.draw.plotting.head_figure) shows every token.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.plotting import COLORSCALE, WEIGHT_HOVER, WEIGHT_STEPS, weights_as_thousandths
from attnviz.errors import AttnvizError

THUMBNAIL_CELLS = 32  # at most this many cells per side on a thumbnail
GAP_FRACTION = 0.12  # space between thumbnails, as a fraction of a thumbnail's side

STATISTICS = {  # column of attnviz.analysis.stats.head_statistics -> what the heatmap's colour bar says
    "entropy": "mean row entropy (nats)",
    "max_weight": "mean largest weight in a row",
    "mean_distance": "mean attention distance (tokens)",
    "to_cls_sep_first": "share to [CLS]/[SEP]/first token (sinks)",
    "to_self": "share to the token itself",
    "to_previous": "share to the previous token",
}
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
    padded = np.zeros((*lead, m * block, m * block), dtype=np.float32)  # zero rows/cols pad to a multiple of b
    padded[..., :n, :n] = a
    sums = padded.reshape(*lead, m, block, m, block).sum(axis=(-3, -1))  # Σ_{i∈I} Σ_{j∈J} a_ij  (..., m, m)
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


def thumbnail_titles(n_layers: int, n_heads: int, highlight: tuple[int, int] | None = None) -> list[str]:
    """'L0 H0', 'L0 H1', ... in layer-major order; the enlarged head marked '▶ L2 H5 ◀'."""
    return [f"▶ L{layer} H{head} ◀" if (layer, head) == highlight else f"L{layer} H{head}"
            for layer in range(n_layers) for head in range(n_heads)]


def _thumbnail(z: np.ndarray, layer: int, head: int, x0: float, y0: float) -> dict:
    """One head's thumbnail: an (m, m) heatmap placed at (x0, y0) on the shared axes of the mosaic."""
    return {
        "type": "heatmap", "z": weights_as_thousandths(z), "coloraxis": "coloraxis", "name": f"L{layer} H{head}",
        "x0": x0, "dx": 1, "y0": y0, "dy": 1,
        "hovertemplate": f"layer {layer}, head {head}<br>weight: {WEIGHT_HOVER}<br>(pick it below to see the tokens)"
                         "<extra></extra>",
    }


def model_view_figure(attentions, labels: list[str], max_cells: int = THUMBNAIL_CELLS,
                      highlight: tuple[int, int] | None = None) -> tuple[go.Figure, int]:
    """Every head of every layer as a thumbnail heatmap: (L, H, n, n) -> (figure with L·H traces, block b).

    Trace k is layer k // H, head k % H. b = 1 means every token is drawn; b > 1 means each cell
    pools b × b tokens (see pool_patterns). highlight = (layer, head) draws a frame around that one.

    Speed: the thumbnails are a mosaic on ONE pair of axes (each trace offset by x0, y0), not 72
    subplots: a browser draws 72 subplots in seconds and one mosaic in a fraction of a second.
    The price is that a thumbnail's hover names its layer, head and weight but not the tokens.
    """
    a = np.asarray(attentions, dtype=np.float32)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise AttnvizError(f"The model view needs attentions of shape (layers, heads, n, n), got {a.shape}.")
    n_layers, n_heads, n = a.shape[0], a.shape[1], a.shape[-1]
    if len(labels) != n:
        raise AttnvizError(f"There are {len(labels)} token labels but the patterns are {n}×{n}.")
    block = pooled_block_size(n, max_cells)
    pooled = pool_patterns(a, block)  # (L, H, m, m)
    m = pooled.shape[-1]
    gap = max(1, round(m * GAP_FRACTION))  # cells of white between thumbnails (and around them, for the frame)
    step = m + gap  # a thumbnail plus the gap after it, in cells

    traces = [_thumbnail(pooled[layer, head], layer, head, head * step, layer * step)
              for layer in range(n_layers) for head in range(n_heads)]
    centre = (m - 1) / 2
    axis = {"showgrid": False, "zeroline": False, "ticks": "", "showline": False, "tickfont": {"size": 11}}
    xaxis = dict(axis, tickvals=[h * step + centre for h in range(n_heads)], ticktext=[f"H{h}" for h in range(n_heads)],
                 side="top", range=[-0.5 - gap, n_heads * step - 0.5], constrain="domain")
    yaxis = dict(axis, tickvals=[layer * step + centre for layer in range(n_layers)],
                 ticktext=[f"L{layer}" for layer in range(n_layers)], scaleanchor="x", constrain="domain",
                 range=[n_layers * step - 0.5, -0.5 - gap])  # reversed: layer 0 on top, query 0 first
    shapes = []
    if highlight is not None:
        layer, head = highlight
        pad = gap / 2
        shapes.append({"type": "rect", "x0": head * step - 0.5 - pad, "x1": head * step + m - 0.5 + pad,
                       "y0": layer * step - 0.5 - pad, "y1": layer * step + m - 0.5 + pad,
                       "line": {"color": "#e4572e", "width": 3}})
    # Height for square thumbnails on a typical wide page (~960 px of plot width, thumbnails at most ~260 px),
    # capped for tall models; scaleanchor keeps them square whatever the real width.
    aspect = (n_layers * step + gap) / (n_heads * step + gap)
    height_px = min(900, max(220, int(min(960, 260 * n_heads) * aspect) + 40))
    layout = {
        "xaxis": xaxis, "yaxis": yaxis, "shapes": shapes, "separators": ",.", "plot_bgcolor": "white",
        "coloraxis": {"colorscale": COLORSCALE, "cmin": 0, "cmax": WEIGHT_STEPS,
                      "colorbar": {"title": {"text": "weight", "side": "right"}, "tickvals": [0, 500, 1000],
                                   "ticktext": ["0", "0.5", "1"], "len": 0.8, "thickness": 12}},
        "height": height_px, "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
    }
    return go.Figure(data=traces, layout=layout), block


def figure_bytes(*figures: go.Figure) -> int:
    """What the figures cost on the wire: the length of their plotly JSON (what st.plotly_chart sends)."""
    return sum(len(fig.to_json()) for fig in figures)


def bytes_per_cell(attentions_shape, *figures: go.Figure) -> float:
    """Bytes sent per weight of the full (L, H, n, n) attention tensor: figure_bytes / (L·H·n·n)."""
    cells = math.prod(int(s) for s in attentions_shape)
    return figure_bytes(*figures) / cells


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


def statistics_figure(rows: list[dict], statistic: str) -> go.Figure:
    """A layer × head heatmap of one head statistic, its value printed in each cell."""
    grid = statistics_grid(rows, statistic)  # (L, H)
    n_layers, n_heads = grid.shape
    fig = go.Figure(go.Heatmap(
        z=grid, x=[f"H{h}" for h in range(n_heads)], y=[f"L{layer}" for layer in range(n_layers)],
        colorscale="Cividis", texttemplate="%{z:.2f}", textfont={"size": 10},
        colorbar={"thickness": 12},  # the title sits above the map, not along the bar
        hovertemplate=f"layer %{{y}}, head %{{x}}<br>{STATISTICS[statistic]}: %{{z:.3f}}<extra></extra>",
    ))
    fig.update_xaxes(type="category", side="top", title_text="head")
    fig.update_yaxes(type="category", autorange="reversed", title_text="layer")
    fig.update_layout(title=STATISTICS[statistic], height=min(700, 42 * n_layers + 130),
                      margin={"l": 10, "r": 10, "t": 80, "b": 10})
    return fig
