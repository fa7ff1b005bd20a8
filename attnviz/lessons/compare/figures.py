"""Figures for comparing two attention patterns: the cell-by-cell difference and the per-row KL.

The difference A − B lives on a diverging scale centred at 0 with a symmetric range, so "no change"
is always white and equal changes either way get equally strong colours (red: A attends more,
blue: B attends more).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.palette import KL_FINITE, KL_INFINITE, LIGHT_GREY, REFERENCE
from attnviz.draw.plotting import distinct_labels

DIFF_VALUES_UP_TO = 8  # print A − B in the cells only up to this many tokens: wider, "+0.00+0.00" runs together
MIN_DIFF_RANGE = 0.01  # two identical patterns still get a readable, symmetric colour bar


def symmetric_range(difference) -> float:
    """r for a colour axis -r..r that holds every |A − B|, rounded up to 2 decimals, at least 0.01."""
    d = np.nan_to_num(np.asarray(difference, dtype=np.float64))
    peak = float(np.abs(d).max()) if d.size else 0.0
    return max(MIN_DIFF_RANGE, math.ceil(peak * 100) / 100)


def kl_text(value: float, digits: int = 3) -> str:
    """A KL in nats as the page prints it: '∞' for an infinite one, never a capped number."""
    return "∞" if math.isinf(value) else f"{value:.{digits}f}"


def row_kl_figure(row_kl, labels: list[str], compared_rows=None) -> go.Figure:
    """Bars of KL(A_i ‖ B_i) per query token (nats) and a dashed line at their mean.

    Rows that are not distributions in both (fully masked) are left out of the mean and drawn grey at 0.
    Infinite rows (B gives zero weight to a key A uses) are drawn as red bars, a little above the tallest
    finite one, labelled ∞; the mean is then ∞ too.
    """
    kl = np.asarray(row_kl, dtype=np.float64)  # (n,)
    live = np.ones_like(kl, dtype=bool) if compared_rows is None else np.asarray(compared_rows, dtype=bool)
    infinite = np.isinf(kl) & live
    finite = kl[np.isfinite(kl) & live]
    top = 1.15 * float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    shown = np.where(infinite, top, np.nan_to_num(kl, posinf=0.0)).astype(np.float32)  # (n,) bar heights
    mean = float(kl[live].mean()) if live.any() else 0.0
    colors = np.where(infinite, KL_INFINITE, np.where(live, KL_FINITE, LIGHT_GREY))
    cats = distinct_labels(labels)
    fig = go.Figure(go.Bar(
        x=cats, y=shown, marker_color=colors.tolist(), name="KL(A‖B)",
        text=["∞" if inf else "" for inf in infinite], textposition="outside", cliponaxis=False,
        customdata=[kl_text(v, 4) for v in kl],
        hovertemplate="query: %{x}<br>KL(A‖B) = %{customdata} nats<extra></extra>",
    ))
    line_at = top if math.isinf(mean) else mean
    fig.add_hline(y=line_at, line_dash="dash", line_color=REFERENCE,
                  annotation_text=f"mean {kl_text(mean)} nats", annotation_position="top right")
    fig.update_xaxes(title_text="query token", type="category", tickangle=-60 if len(cats) <= 40 else 0)
    fig.update_yaxes(title_text="KL(A‖B), nats", rangemode="tozero", range=[0, 1.25 * top] if infinite.any() else None)
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10}, showlegend=False)
    return fig
