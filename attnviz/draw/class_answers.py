"""The class's answers to a lecture question beside the right answer: a bar per option (choice) or a histogram
(number), the right answer marked. The counts come from the store's answers (attnviz.lecture.answer_kinds).

The right answer is green (attnviz/draw/palette.py RIGHT) and never told by colour alone: its bar is hatched and
says "✓ right", its line is dashed and says "✓ right answer"."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.palette import CLASS, RIGHT

BINS = 12
MARK = "✓ right"  # the words on the right answer's bar


def choice_figure(options: tuple[str, ...], counts: list[int], right: str | None, right_from: str) -> go.Figure:
    """One bar per option with its count; the right option green, hatched and marked "✓ right" (right_from: where
    the right answer comes from)."""
    is_right = [option == right for option in options]
    text = [f"{c} {MARK}" if r else str(c) for c, r in zip(counts, is_right, strict=True)]
    fig = go.Figure(go.Bar(x=list(options), y=counts, text=text,
                           marker={"color": [RIGHT if r else CLASS for r in is_right],
                                   "pattern": {"shape": ["/" if r else "" for r in is_right], "fgcolor": "#ffffff",
                                               "solidity": 0.3}},
                           textposition="outside", hovertemplate="%{x}: %{y} students<extra></extra>"))
    title = f"The class's answers ({sum(counts)})" + (f": hatched, {MARK} = {right_from} answer" if right else "")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if max(counts, default=0) <= 10 else None)
    fig.update_layout(title=title, yaxis_title="students", height=320, margin={"t": 50, "b": 40, "l": 50, "r": 20},
                      showlegend=False)
    return fig


def number_figure(values: list[float], right: float | None, right_from: str) -> go.Figure:
    """A histogram of the class's numbers; the right number as a green line (right_from: where it comes from)."""
    data = np.asarray(values, dtype=float)
    points = np.append(data, right) if right is not None else data
    low, high = (float(points.min()), float(points.max())) if points.size else (0.0, 1.0)
    if high == low:
        low, high = low - 0.5, high + 0.5
    size = (high - low) / BINS
    anchor = right if right is not None else low  # a bin centred on the right answer: a bar on its line is right
    start = anchor - size / 2 - math.ceil((anchor - low) / size) * size
    fig = go.Figure(go.Histogram(x=data, xbins={"start": start, "end": high + size, "size": size},
                                 marker_color=CLASS, hovertemplate="%{x}: %{y} students<extra></extra>"))
    if right is not None:
        fig.add_vline(x=right, line_color=RIGHT, line_width=3, line_dash="dash",
                      annotation_text=f"✓ right answer {right:.4g} ({right_from})", annotation_position="top")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if data.size <= 10 else None)  # whole students
    fig.update_layout(title=f"The class's answers ({data.size})", xaxis_title="answer", yaxis_title="students",
                      height=320, margin={"t": 60, "b": 40, "l": 50, "r": 20}, showlegend=False, bargap=0.05)
    return fig
