"""Plotly figures of attention patterns.

Bytes matter in a classroom (12 heads × 128² cells on a school network), so weights travel as
uint16 thousandths (w·1000 rounded, 2 bytes a cell; plotly sends typed arrays as base64: 2.7
bytes a cell, where float32 costs 5.3). The hover still reads "0.523": d3's zero-padded grouping
turns 523 into "0,523", and `separators=",."` makes that group separator a decimal point. Every
other number in these figures is set as tick text, so the swapped separators touch nothing else.
Tokens label the axes once (not per cell); repeated tokens are kept apart with zero-width marks.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

WEIGHT_STEPS = 1000  # weights are drawn as integers 0..1000 = thousandths
WEIGHT_HOVER = "%{z:05,d}"  # 523 -> "0,523" -> shown as "0.523" with separators ",."
COLORSCALE = "Viridis"
ZERO_WIDTHS = "\u200b\u200c\u200d\u2060"  # invisible marks that tell repeated tokens apart
PANEL_MARK = "\u2063"  # invisible separator: begins a grid panel's own copy of the token categories
OVERVIEW_CELLS = 128  # above this many tokens the head grid shows a block-averaged overview


def invisible_suffix(count: int) -> str:
    """The count written in base 4 with zero-width characters: '' for 0, and O(log n) long."""
    digits = ""
    while count:
        count, digit = divmod(count, len(ZERO_WIDTHS))
        digits = ZERO_WIDTHS[digit] + digits
    return digits


def distinct_labels(labels: list[str]) -> list[str]:
    """Axis categories that stay distinct when a token repeats, yet read the same ('the', 'the' + marks)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        label = plain_text(label) if label.strip() else "␣"
        count = seen.get(label, 0)
        seen[label] = count + 1
        out.append(label + invisible_suffix(count))
    return out


def visible_text(label: str) -> str:
    """A drawn label without the invisible marks that `distinct_labels` added."""
    return label.translate({ord(c): None for c in ZERO_WIDTHS + PANEL_MARK})


def panel_categories(categories: list[str], panel: int) -> list[str]:
    """A panel's own copy of the axis categories: the same text plus an invisible panel mark."""
    if panel == 0:
        return categories
    mark = PANEL_MARK + invisible_suffix(panel)
    return [c + mark for c in categories]


def spacer_categories(count: int, start: int) -> list[str]:
    """Blank, distinct categories that leave a gap between two panels on a shared axis."""
    return [PANEL_MARK * 2 + invisible_suffix(start + k + 1) for k in range(count)]


def plain_text(label: str) -> str:
    """A token as plotly text that shows exactly what was typed: plotly reads a few HTML tags in
    labels (<b>, <a href>, <br>), so '<', '>' and '&' are escaped and never become markup."""
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def weights_as_thousandths(weights) -> np.ndarray:
    """float weights in [0, 1] -> uint16 thousandths (0..1000): what the heatmaps send and hover shows."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float32), nan=0.0)
    return np.rint(np.clip(w, 0.0, 1.0) * WEIGHT_STEPS).astype(np.uint16)


def block_average(weights: np.ndarray, labels: list[str], max_cells: int) -> tuple[np.ndarray, list[str], int]:
    """Average (n, n) over b×b blocks so that at most max_cells remain per side: (pattern, labels, b)."""
    n = weights.shape[-1]
    b = math.ceil(n / max_cells)
    if b <= 1:
        return weights, labels, 1
    m = math.ceil(n / b)
    padded = np.zeros((m * b, m * b), dtype=np.float32)
    padded[:n, :n] = weights
    counts = np.zeros((m * b, m * b), dtype=np.float32)
    counts[:n, :n] = 1.0
    pooled = padded.reshape(m, b, m, b).sum(axis=(1, 3)) / counts.reshape(m, b, m, b).sum(axis=(1, 3))  # (m, m)
    block_labels = [f"{labels[i * b]}…" for i in range(m)]
    return pooled, block_labels, b


def weight_colorbar(horizontal: bool = False) -> dict:
    """The 0..1 weight legend (ticks as text, since the data are thousandths); horizontal under a grid."""
    ticks = [0, 250, 500, 750, 1000]
    bar = dict(title=dict(text="weight", side="right"), tickvals=ticks, ticktext=["0", "0.25", "0.5", "0.75", "1"], len=0.8)
    if horizontal:  # under the grid: the panels get the width a vertical bar would take
        bar.update(orientation="h", x=0.5, xanchor="center", y=0.0, yanchor="bottom", yref="container", len=0.6,
                   thickness=12, title=dict(text="weight after softmax", side="top"))
    return bar


def weight_heatmap(z: np.ndarray, labels: list[str], name: str, coloraxis: str = "coloraxis") -> go.Heatmap:
    """One pattern as uint16 thousandths on the shared colour axis; labels [] = the caller sets x and y."""
    cats = distinct_labels(labels) if labels else None
    return go.Heatmap(
        z=weights_as_thousandths(z), x=cats, y=cats, coloraxis=coloraxis, name=name,
        hovertemplate=f"{name}<br>query: %{{y}}<br>key: %{{x}}<br>weight: {WEIGHT_HOVER}<extra></extra>",
    )


ALL_LABELS_UP_TO = 32  # up to this many tokens every one is labelled; beyond, plotly thins them


def key_axis(n_labels: int, title: bool = True, labels: bool = True) -> dict:
    """The x axis of a pattern: keys, as token categories."""
    small = n_labels <= 40
    every = dict(tickmode="linear", dtick=1) if n_labels <= ALL_LABELS_UP_TO else {}
    return dict(title=dict(text="key (attended to)" if title else None), tickangle=-60 if small else 0,
                type="category", showticklabels=labels, tickfont=dict(size=10 if small else 8), **every)


def query_axis(n_labels: int, title: bool = True, labels: bool = True) -> dict:
    """The y axis of a pattern: queries top to bottom, as token categories."""
    axis = key_axis(n_labels, title, labels)
    axis.update(title=dict(text="query (attending)" if title else None), autorange="reversed", tickangle=0)
    return axis


def style_axes(fig: go.Figure, n_labels: int, row=None, col=None, titles: bool = True,
               y_labels: bool = True, x_labels: bool = True) -> None:
    fig.update_xaxes(key_axis(n_labels, titles, x_labels), row=row, col=col)
    fig.update_yaxes(query_axis(n_labels, titles, y_labels), row=row, col=col)


def head_grid_figure(weights, labels: list[str], heads: list[int], subtitles: list[str] | None = None,
                     columns: int = 3, max_cells: int = OVERVIEW_CELLS) -> tuple[go.Figure, int]:
    """A grid of heatmaps, one per head, sharing one 0..1 colour axis.

    weights: (n_heads_total, n, n) for one layer; heads: which to draw.
    Returns the figure and the block size b (1 = every token drawn; b > 1 = b×b blocks averaged).
    """
    weights = np.asarray(weights, dtype=np.float32)
    cols = min(columns, len(heads))
    rows = math.ceil(len(heads) / cols)
    titles = subtitles or [f"head {h}" for h in heads]
    patterns = [block_average(weights[h], labels, max_cells) for h in heads]
    block, cats = patterns[0][2], distinct_labels(patterns[0][1])
    n = len(cats)  # cells per side as drawn
    # All panels share ONE pair of axes: each column (row) holds its own copy of the token categories,
    # with blank spacer categories between panels. Twelve separate axis pairs cost the browser ~0.7 s of
    # tick layout on every redraw; one pair draws in a fraction of that, and hovers still name tokens.
    side = 190 if n <= 16 else 230 if n <= 40 else 280  # panel size in pixels
    cell = side / n
    gap_x, gap_y = max(1, math.ceil(14 / cell)), max(1, math.ceil(30 / cell))  # gaps, in cells
    x_order, y_order = [], []
    for c in range(cols):
        x_order += panel_categories(cats, c) + (spacer_categories(gap_x, len(x_order)) if c < cols - 1 else [])
    for r in range(rows):
        y_order += panel_categories(cats, r) + (spacer_categories(gap_y, len(y_order)) if r < rows - 1 else [])
    traces, title_notes = [], []
    for i, (h, (pattern, _, _)) in enumerate(zip(heads, patterns, strict=True)):
        r, c = i // cols, i % cols
        trace = weight_heatmap(pattern, labels=[], name=f"head {h}")
        trace.update(x=panel_categories(cats, c), y=panel_categories(cats, r))
        traces.append(trace)
        title_notes.append(dict(text=titles[i], x=c * (n + gap_x) + (n - 1) / 2, y=r * (n + gap_y) - 0.5, xref="x",
                                yref="y", xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=11)))
    top, bottom = 40, (75 if n <= 40 else 40) + 45  # + the colour bar under the grid
    x_axis = {**key_axis(n), "showgrid": False, "categoryorder": "array", "categoryarray": x_order,
              "range": [-0.5, len(x_order) - 0.5], "constrain": "domain"}
    y_axis = {**query_axis(n), "showgrid": False, "categoryorder": "array", "categoryarray": y_order,
              "range": [len(y_order) - 0.5, -0.5], "autorange": False, "scaleanchor": "x",
              "constrain": "domain"}  # square cells
    fig = go.Figure(data=traces, layout=dict(
        xaxis=x_axis, yaxis=y_axis, annotations=title_notes, separators=",.",
        height=int(len(y_order) * cell) + top + bottom, margin=dict(l=10, r=10, t=top, b=bottom),
        coloraxis=dict(colorscale=COLORSCALE, cmin=0, cmax=WEIGHT_STEPS, colorbar=weight_colorbar(horizontal=True)),
    ))
    return fig, block


def head_figure(weights, labels: list[str], title: str, show_values: bool | None = None,
                col_labels: list[str] | None = None) -> go.Figure:
    """One pattern in full detail (every token); weights printed in the cells when there are few tokens.

    col_labels: the key tokens when they differ from the query tokens (cross-attention: target × source).
    """
    weights = np.asarray(weights, dtype=np.float32)
    n = max(weights.shape[-2:])
    trace = weight_heatmap(weights, labels, title)
    if col_labels is not None:
        trace.update(x=distinct_labels(col_labels))
    if show_values if show_values is not None else n <= 16:
        trace.update(texttemplate=WEIGHT_HOVER, textfont=dict(size=10))
    fig = go.Figure(trace)
    style_axes(fig, n)
    side = min(900, max(380, 22 * weights.shape[-2] + 160))
    fig.update_layout(
        title=title, coloraxis=dict(colorscale=COLORSCALE, cmin=0, cmax=WEIGHT_STEPS, colorbar=weight_colorbar()),
        separators=",.", height=side, margin=dict(l=10, r=10, t=50, b=10),
    )
    return fig


def decode_plotly_array(value) -> np.ndarray:
    """The numbers of a plotly array as sent to the browser (a list, or a base64 'bdata' typed array)."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            raw = raw.reshape(dims)
        return raw
    return np.asarray(value)
