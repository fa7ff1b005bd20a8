"""The class's answers to a lecture question beside the right answer: a bar per option (choice) or a histogram
(number), the right answer marked. The kinds that draw them are in attnviz/lecture/kinds/.

The right answer is green (attnviz/draw/palette.py RIGHT) and never told by colour alone: its bar is hatched and
says "✓ right", its line is dashed and the chart's title says "dashed line: ✓ right answer" (a label on the line
itself sat over the title)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.palette import CLASS, RIGHT
from attnviz.draw.plotting import plain_text

BINS = 12
MARK = "✓ right"  # the words on the right answer's bar
LABEL_LINE = 12  # characters per line of an option's label under its bar


def wrapped(text: str, width: int = LABEL_LINE) -> str:
    """A label in lines of about `width` characters, joined by <br>, broken between words (a word longer than that
    keeps its line): plotly turns labels that do not fit side by side, and on a 390 px phone "every region the same"
    turned and ran off the chart's bottom."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines) or text


NO_ANSWERS = "No answers from the class"  # said in the plot itself, where its bars would be


def none_said(fig: go.Figure) -> None:
    """A chart of no answers says so where its bars would be, and its students' axis holds 0 alone (an empty axis up
    to 4 read as a scale of answers that were not there)."""
    fig.add_annotation(text=NO_ANSWERS, xref="paper", yref="paper", x=0.5, y=0.55, showarrow=False,
                       font={"size": 16}, bgcolor="rgba(255, 255, 255, 0.85)")  # over the right answer's line
    fig.update_yaxes(range=[0, 1], tickvals=[0], dtick=None)


def class_said(total: int) -> str:
    """The chart's first title line: how many answered, or that nobody did."""
    return f"The class's answers ({total})" if total else "The class gave no answers"


def choice_figure(options: tuple[str, ...], counts: list[int], right: str | None, right_from: str) -> go.Figure:
    """One bar per option with its count; the right option green, hatched and marked "✓ right" (right_from: where
    the right answer comes from, in its hover; the words above the chart say it too)."""
    is_right = [option == right for option in options]
    text = [f"{c} {MARK}" if r else str(c) for c, r in zip(counts, is_right, strict=True)]
    said = [f" (the right answer, {right_from})" if r else "" for r in is_right]
    fig = go.Figure(go.Bar(x=list(options), y=counts, text=text,
                           marker={"color": [RIGHT if r else CLASS for r in is_right],
                                   "pattern": {"shape": ["/" if r else "" for r in is_right], "fgcolor": "#ffffff",
                                               "solidity": 0.3}},
                           customdata=said, textposition="outside",
                           hovertemplate="%{x}: %{y} students%{customdata}<extra></extra>"))
    # two lines: plotly does not wrap a title, and on a phone one line was cut
    title = class_said(sum(counts)) + (f"<br>hatched, {MARK}: the right answer" if right else "")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if max(counts, default=0) <= 10 else None)
    # each option's label level, in lines (the wider the bars, the longer a line), and the margin under the plot
    # grown to hold them, the chart with it past two lines
    labels = [wrapped(plain_text(o), max(LABEL_LINE, 48 // max(len(options), 1))) for o in options]
    lines = max((label.count("<br>") + 1 for label in labels), default=1)
    fig.update_xaxes(tickvals=list(options), ticktext=labels, tickangle=0, automargin=True)
    fig.update_layout(title={"text": title, "font": {"size": 15}}, yaxis_title="students",
                      height=340 + 16 * max(lines - 2, 0),
                      margin={"t": 70, "b": 40, "l": 50, "r": 20}, showlegend=False)
    if not sum(counts):
        none_said(fig)
    return fig


def number_figure(values: list[float], right: float | None, right_from: str, tolerance: float = 0.0) -> go.Figure:
    """A histogram of the class's numbers; the right number as a green line, and the band of answers counted right
    when the plan gives a tolerance (right_from: where the right number comes from). The right number is said in
    the title, not in a label on the line: a label above the plot ran over the title."""
    data = np.asarray(values, dtype=float)
    ends = [right - tolerance, right + tolerance] if right is not None else []
    if not data.size and right is not None:
        # no answers: the right number in the middle, its band a half of the axis (with no bars, plotly's own range
        # was the band's ends, and the whole plot read as "right")
        half = 2 * tolerance or max(1.0, abs(right) / 4)
        low, high = right - half, right + half
    else:
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
    title = class_said(data.size)
    if right is not None:
        if tolerance:
            fig.add_vrect(x0=right - tolerance, x1=right + tolerance, fillcolor=RIGHT, opacity=0.15, line_width=0)
        fig.add_vline(x=right, line_color=RIGHT, line_width=3, line_dash="dash")
        title += f"<br>dashed line: ✓ right answer, {right:.4g}" + (f" ± {tolerance:g}" if tolerance else "")
    fig.update_yaxes(tickformat="d", rangemode="tozero", dtick=1 if data.size <= 10 else None)  # whole students
    fig.update_layout(title={"text": title, "font": {"size": 15}}, xaxis_title="answer", yaxis_title="students",
                      height=340, margin={"t": 70, "b": 40, "l": 50, "r": 20}, showlegend=False, bargap=0.05)
    fig.update_xaxes(range=[low, high])  # the axis drawn is the one the bins and the band were laid on
    if right is not None:  # the right number on the axis, under its line ("✓ 2"), beside round ticks it does not crowd
        values, texts = answer_axis_ticks(low, high, right)
        fig.update_xaxes(tickvals=values, ticktext=texts)
    if not data.size:
        none_said(fig)
    return fig


def answer_axis_ticks(low: float, high: float, right: float, about: int = 5) -> tuple[list[float], list[str]]:
    """The number axis' ticks from low to high: about `about` round values (steps of 1, 2 or 5 times a power of ten)
    and the right answer, marked "✓"; a round tick within half a step of it is left out (its label would overlap)."""
    raw = (high - low) / about
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    rounds = [first + i * step for i in range(int((high - first) / step) + 1)]
    kept = [v for v in rounds if abs(v - right) >= 0.5 * step]
    values = sorted([*kept, right])
    return values, [f"✓ {v:.4g}" if v == right else f"{v:.4g}" for v in values]
