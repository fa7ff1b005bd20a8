"""The log-log cost chart: a method against exact attention, with n² and n reference lines."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.palette import GREY, PAIR
from attnviz.draw.plotting import DECADE_LABELS
from attnviz.lessons.efficient.cost_point import CostPoint

FIELDS = {"seconds": ("time (s)", 1.0), "peak_bytes": ("peak tensor memory (MB)", 1e-6)}


def cost_figure(exact: list[CostPoint], method: list[CostPoint], method_title: str, field: str) -> go.Figure:
    """Exact and the method against n on log-log axes. The reference lines pass through each curve's first
    point: c·n² through exact's, c·n through the method's, so a slope can be read against them."""
    title, factor = FIELDS[field]
    ns = np.array([p.n for p in exact], dtype=np.float64)
    fig = go.Figure()
    for name, points, colour in (("exact (dense)", exact, PAIR[1]), (method_title, method, PAIR[0])):
        y = np.array([getattr(p, field) for p in points], dtype=np.float64) * factor
        fig.add_trace(go.Scatter(x=ns, y=y, mode="lines+markers", name=name, line={"color": colour, "width": 3},
                                 hovertemplate=f"{name}<br>n = %{{x}}<br>{title} = %{{y:.4g}}<extra></extra>"))
    e0 = getattr(exact[0], field) * factor
    m0 = getattr(method[0], field) * factor
    for name, y, dash in (("∝ n² (through exact's first point)", e0 * (ns / ns[0]) ** 2, "dash"),
                          ("∝ n (through the method's first point)", m0 * (ns / ns[0]), "dot")):
        fig.add_trace(go.Scatter(x=ns, y=y, mode="lines", name=name, line={"color": GREY, "dash": dash, "width": 1.5},
                                 hoverinfo="skip"))
    fig.update_xaxes(title_text="n (tokens)", type="log", tickvals=ns, ticktext=[str(int(n)) for n in ns])
    fig.update_yaxes(title_text=title, type="log", **DECADE_LABELS)
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0}, title=title)
    return fig
