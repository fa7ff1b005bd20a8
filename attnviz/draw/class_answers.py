"""The class's answers to a lecture question beside the right answer: a bar per option (choice) or a histogram
(number), the right answer marked. The kinds that draw them are in attnviz/lecture/kinds/."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

CLASS = "#2e86ab"
RIGHT = "#2a9d4b"
BINS = 12


def choice_figure(options: tuple[str, ...], counts: list[int], right: str | None, right_from: str) -> go.Figure:
    """One bar per option with its count; the right option green (right_from: where it comes from, for its hover;
    the words above the chart say it too)."""
    colours = [RIGHT if option == right else CLASS for option in options]
    said = [f" (the right answer, {right_from})" if option == right else "" for option in options]
    fig = go.Figure(go.Bar(x=list(options), y=counts, marker_color=colours, text=counts, textposition="outside",
                           customdata=said, hovertemplate="%{x}: %{y} students%{customdata}<extra></extra>"))
    # two lines: plotly does not wrap a title, and on a phone one line was cut
    title = f"The class's answers ({sum(counts)})" + ("<br>green: the right answer" if right else "")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if max(counts, default=0) <= 10 else None)
    fig.update_layout(title={"text": title, "font": {"size": 15}}, yaxis_title="students", height=340,
                      margin={"t": 70, "b": 40, "l": 50, "r": 20}, showlegend=False)
    return fig


def number_figure(values: list[float], right: float | None, right_from: str, tolerance: float = 0.0) -> go.Figure:
    """A histogram of the class's numbers; the right number as a green line, and the band of answers counted right
    when the plan gives a tolerance (right_from: where the right number comes from). The right number is said in
    the title, not in a label on the line: a label above the plot ran over the title."""
    data = np.asarray(values, dtype=float)
    ends = [right - tolerance, right + tolerance] if right is not None else []
    points = np.append(data, ends) if ends else data
    low, high = (float(points.min()), float(points.max())) if points.size else (0.0, 1.0)
    if high == low:
        low, high = low - 0.5, high + 0.5
    pad = (high - low) * 0.15  # the tolerance's band and the outer bars stay inside the axis
    low, high = low - pad, high + pad
    size = (high - low) / BINS
    anchor = right if right is not None else low  # a bin centred on the right answer: a bar on its line is right
    start = anchor - size / 2 - math.ceil((anchor - low) / size) * size
    fig = go.Figure(go.Histogram(x=data, xbins={"start": start, "end": high + size, "size": size},
                                 marker_color=CLASS, hovertemplate="%{x}: %{y} students<extra></extra>"))
    title = f"The class's answers ({data.size})"
    if right is not None:
        if tolerance:
            fig.add_vrect(x0=right - tolerance, x1=right + tolerance, fillcolor=RIGHT, opacity=0.15, line_width=0)
        fig.add_vline(x=right, line_color=RIGHT, line_width=3)
        title += f"<br>green line: the right answer, {right:.4g}" + (f" ± {tolerance:g}" if tolerance else "")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if data.size <= 10 else None)  # whole students
    fig.update_layout(title={"text": title, "font": {"size": 15}}, xaxis_title="answer", yaxis_title="students",
                      height=340, margin={"t": 70, "b": 40, "l": 50, "r": 20}, showlegend=False, bargap=0.05)
    return fig
