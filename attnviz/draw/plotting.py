"""Tokens as plotly axis categories, log axes labelled by their decades, and plotly's arrays read back.

Attention patterns are drawn by the canvas component (attnviz/draw/heatmap.py); plotly draws only the
line, bar and histogram charts. Where those charts put tokens on an axis, each token is one category:
repeated tokens are kept apart with zero-width marks, and '<', '>' and '&' are escaped.
"""

from __future__ import annotations

import numpy as np

ZERO_WIDTHS = "\u200b\u200c\u200d\u2060"  # invisible marks that tell repeated tokens apart

# A log axis's settings that label only its decades, written out in full (0.001, 0.01): plotly's in-between
# labels read "2" and "5" where 0.02 and 0.05 are meant, and its SI suffixes ("100µ", "10m") look like units.
DECADE_LABELS = {"minorloglabels": "none", "exponentformat": "none"}


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


# A projector's back row reads type of 20 px and more (a 1024 × 768 projector, at the width of a page column)
PROJECTOR_MIN_PX = 20


def projector_figure(fig, min_px: int = PROJECTOR_MIN_PX):
    """A copy of a plotly figure whose every text (titles, axis titles, ticks, legend, annotations and subplot
    titles, colour bars, trace text, hover) is at least `min_px` px, with the room that larger type needs: a fixed
    height grows with the type, the legend goes below the x-axis title, and the title sits in a top margin of its
    own. The input figure is left as it was."""
    import plotly.graph_objects as go

    fig = go.Figure(fig)  # a copy: a cached figure may be drawn at normal size too
    lay = fig.layout

    def at_least(font, px: float = min_px) -> None:
        font.size = max(font.size or 0, px)

    old = lay.font.size or 12
    at_least(lay.font)
    at_least(lay.hoverlabel.font)
    at_least(lay.legend.font)
    at_least(lay.title.font, min_px + 2)
    fig.for_each_xaxis(lambda a: (at_least(a.title.font), at_least(a.tickfont)))
    fig.for_each_yaxis(lambda a: (at_least(a.title.font), at_least(a.tickfont)))
    fig.for_each_annotation(lambda a: at_least(a.font))
    for trace in fig.data:
        if getattr(trace, "textfont", None) is not None and trace.textfont.size is not None:
            at_least(trace.textfont)
        if getattr(trace, "text", None) is not None or getattr(trace, "texttemplate", None):
            # plotly shrinks a bar's or a cell's text to fit it: on a projector it stays readable, if wider
            lay.uniformtext.update(minsize=min_px, mode="show")
        # a colour bar only where the trace shows one (touching a hidden one's fonts would make plotly draw it)
        marker = getattr(trace, "marker", None)
        shown = [trace.colorbar] if "colorbar" in trace and trace.showscale is not False else []
        if marker is not None and "colorbar" in marker and marker.showscale:
            shown.append(marker.colorbar)
        for bar in shown:
            at_least(bar.tickfont)
            at_least(bar.title.font)
    grow = max(lay.font.size / old, 1.0)
    if lay.height:  # the plot area keeps about its size; the larger ticks and titles get the added room
        lay.height = int(lay.height + 60 * min(grow, 2.0))
    title = lay.title.text or ""
    top = 16
    if title:  # one line of title per ~70 characters of 22 px type at a projector column's width
        top += (title.count("<br>") + 1 + len(title) // 70) * (min_px + 10)
        # above the plot, growing upwards into its own margin (a title anchored at the top of the figure put the
        # first of two lines above the figure's edge)
        lay.title.update(y=1, yref="paper", yanchor="bottom", pad={"b": 10})
    if lay.legend.orientation == "h" and lay.legend.y is not None and lay.legend.y > 1:
        # a legend above the plot: its own rows in the top margin, under the title, not over the plot
        names = [t.name for t in fig.data if t.name and t.showlegend is not False]
        width = sum(len(name) * 0.55 * min_px + 50 for name in names)
        rows = max(1, -(-int(width) // 460))
        plot_px = max((lay.height or 450) - (lay.margin.b or 80) - 100, 120)
        lay.legend.update(y=1.0 + (min_px + 14) / plot_px, yanchor="bottom", yref="paper")  # over bars' outside text
        top += rows * int(min_px * 1.5) + min_px + 22
        if title:  # the title above the legend
            lay.title.update(y=1.0 + (min_px + 14) / plot_px + rows * min_px * 1.5 / plot_px)
    if top > 16:
        lay.margin.t = max(lay.margin.t or 0, top)
    return legend_below_axis_title(fig)


def legend_below_axis_title(fig):
    """The figure with a horizontal legend that sits under the plot moved below the x-axis title (plotly places it
    in the plot's fractions, so a fixed y = -0.14 lands on the title of a short plot or one with larger type)."""
    lay = fig.layout
    if lay.legend.orientation != "h" or lay.legend.y is None or lay.legend.y >= 0:
        return fig
    px = lay.font.size or 12
    below = int(2 * px + 30)  # the tick labels and the axis title under the plot
    lay.margin.b = max(lay.margin.b or 0, below + int(px * 1.6) + 12)  # ... and one row of legend
    plot_px = (lay.height or 450) - (lay.margin.t or 100) - lay.margin.b
    lay.legend.update(y=-below / max(plot_px, 60), yanchor="top")
    return fig
