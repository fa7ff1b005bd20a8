"""Plotly figures of attention patterns.

Bytes matter in a classroom (12 heads × 128² cells on a school network), so weights travel as
uint16 thousandths (w·1000 rounded, 2 bytes a cell; plotly sends typed arrays as base64: 2.7
bytes a cell, where float32 costs 5.3). The hover still reads "0.523": d3's zero-padded grouping
turns 523 into "0,523", and `separators=",."` makes that group separator a decimal point. Every
other number in these figures is set as tick text, so the swapped separators touch nothing else.
Tokens label the axes once (not per cell); repeated tokens are kept apart with zero-width marks.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

WEIGHT_STEPS = 1000  # weights are drawn as integers 0..1000 = thousandths
WEIGHT_HOVER = "%{z:05,d}"  # 523 -> "0,523" -> shown as "0.523" with separators ",."
COLORSCALE = "Viridis"
ZERO_WIDTHS = "\u200b\u200c\u200d\u2060"  # invisible marks that tell repeated tokens apart


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
    return label.translate({ord(c): None for c in ZERO_WIDTHS})


def plain_text(label: str) -> str:
    """A token as plotly text that shows exactly what was typed: plotly reads a few HTML tags in
    labels (<b>, <a href>, <br>), so '<', '>' and '&' are escaped and never become markup."""
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def weights_as_thousandths(weights) -> np.ndarray:
    """float weights in [0, 1] -> uint16 thousandths (0..1000): what the heatmaps send and hover shows."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float32), nan=0.0)
    return np.rint(np.clip(w, 0.0, 1.0) * WEIGHT_STEPS).astype(np.uint16)


def weight_colorbar() -> dict:
    """The 0..1 weight legend (ticks as text, since the data are thousandths)."""
    ticks = [0, 250, 500, 750, 1000]
    return dict(title=dict(text="weight", side="right"), tickvals=ticks, ticktext=["0", "0.25", "0.5", "0.75", "1"], len=0.8)


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
