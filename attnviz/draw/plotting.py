"""Tokens as plotly axis categories, log axes labelled by their decades, and plotly's arrays read back.

Attention patterns are drawn by the canvas component (attnviz/draw/heatmap_payload.py); plotly draws only the
line, bar and histogram charts. Where those charts put tokens on an axis, each token is one category:
repeated tokens are kept apart with zero-width marks, and '<', '>' and '&' are escaped.
"""

from __future__ import annotations

import base64
import copy

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
        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            raw = raw.reshape(dims)
        return raw
    return np.asarray(value)


# A projector's back row reads type of 20 px and more (a 1024 × 768 projector, at the width of a page column)
PROJECTOR_MIN_PX = 20
# The layout's `meta` of a figure of pictures that keep their shape, each drawn from the top of its room: at a phone's
# width they are far shorter than the figure's fixed height, and a page may cut that empty bottom (ui/fit_pictures.py).
PICTURES_AT_TOP = {"attnviz": "pictures at top"}


def figure_dict(fig) -> dict:
    """A plotly figure (or its dict) as a plain dict, a copy: the functions below change it in place without a
    second round of plotly's validation (Streamlit validates the figure it is given once; a go.Figure copy cost
    40-150 ms more per chart here)."""
    return fig.to_dict() if hasattr(fig, "to_dict") else copy.deepcopy(fig)


def projector_figure(fig, min_px: int = PROJECTOR_MIN_PX) -> dict:
    """The figure (as a dict) with every text (titles, axis titles, ticks, legend, annotations and subplot titles,
    shown colour bars, trace text, hover) at least `min_px` px, with the room that larger type needs: a fixed height
    grows with the type, the title sits in a top margin of its own, a legend above the plot gets its rows there too,
    and one under the plot goes below the x-axis title. The input figure is left as it was."""
    d = figure_dict(fig)
    lay = d.setdefault("layout", {})

    def at_least(holder: dict, key: str = "font", px: float = min_px) -> None:
        font = holder.setdefault(key, {})
        font["size"] = max(font.get("size") or 0, px)

    def sub(holder: dict, key: str) -> dict:
        value = holder.get(key)
        if not isinstance(value, dict):
            value = holder[key] = {"text": value} if key == "title" and isinstance(value, str) else {}
        return value

    old = (lay.get("font") or {}).get("size") or 12
    at_least(lay)
    at_least(sub(lay, "hoverlabel"))
    at_least(sub(lay, "legend"))
    title = sub(lay, "title")
    at_least(title, px=min_px + 2)
    if any(t.get("type", "scatter") in CARTESIAN for t in d.get("data") or []):
        # axes the figure left to defaults get them from Streamlit's theme, ticks at 14 px: named here
        lay.setdefault("xaxis", {})
        lay.setdefault("yaxis", {})
    for name, axis in list(lay.items()):
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            at_least(sub(axis, "title"))
            at_least(axis, "tickfont")
    for note in lay.get("annotations") or []:
        at_least(note)
    for trace in d.get("data") or []:
        if (trace.get("textfont") or {}).get("size") is not None:
            at_least(trace, "textfont")
        if trace.get("text") is not None or trace.get("texttemplate"):
            # plotly shrinks a bar's or a cell's text to fit it: on a projector it stays readable, if wider
            lay["uniformtext"] = {"minsize": min_px, "mode": "show"}
            if trace.get("type") == "bar" and trace.get("textposition") == "outside":
                trace["cliponaxis"] = False  # a full bar's label above the plot, whole
        # a colour bar only where the trace shows one (giving a hidden one fonts would make plotly draw it)
        marker = trace.get("marker") or {}
        bars = [trace.get("colorbar")] if trace.get("type") in COLOURBAR_TRACES and trace.get("showscale") is not False else []
        if marker.get("showscale"):
            bars.append(marker.get("colorbar"))
        for bar in bars:
            if isinstance(bar, dict):
                at_least(bar, "tickfont")
                at_least(sub(bar, "title"))
    grow = max(lay["font"]["size"] / old, 1.0)
    axes = [a for name, a in lay.items() if name.startswith(("xaxis", "yaxis")) and isinstance(a, dict)]
    hidden = bool(axes) and all(a.get("visible") is False for a in axes)  # pictures: no ticks, no axis titles
    if lay.get("height") and not hidden:  # the plot area keeps about its size; the larger ticks and titles get the
        # added room (figures whose axes are all hidden have neither: 100 px more left a blank band under 5 pictures)
        lay["height"] = int(lay["height"] + 60 * min(grow, 2.0))
    margin = lay.setdefault("margin", {})
    text = title.get("text") or ""
    top = 16
    if text:  # one line of title per ~70 characters of 22 px type at a projector column's width
        top += (text.count("<br>") + 1 + len(text) // 70) * (min_px + 10)
        # above the plot, growing upwards into its own margin (a title anchored at the top of the figure put the
        # first of two lines above the figure's edge)
        # (plotly anchors a title of several lines by its first: the lines under it get room of their own)
        title.update(y=1, yref="paper", yanchor="bottom", pad={"b": 10 + text.count("<br>") * (min_px + 10)})
    legend = lay["legend"]
    if legend.get("orientation") == "h" and (legend.get("y") or 0) > 1:
        # a legend above the plot: its own rows in the top margin, under the title, not over the plot
        names = [t.get("name") for t in d.get("data") or [] if t.get("name") and t.get("showlegend") is not False]
        rows = max(1, -(-int(sum(len(name) * 0.55 * min_px + 50 for name in names)) // 460))
        plot_px = max((lay.get("height") or 450) - (margin.get("b") or 80) - 100, 120)
        legend.update(y=1.0 + (min_px + 14) / plot_px, yanchor="bottom", yref="paper")  # over bars' outside text
        top += rows * int(min_px * 1.5) + min_px + 22
        if text:  # the title above the legend
            title["y"] = 1.0 + (min_px + 14) / plot_px + rows * min_px * 1.5 / plot_px
    if top > 16:
        margin["t"] = max(margin.get("t") or 0, top)
    return legend_below_axis_title(d)


CARTESIAN = ("scatter", "bar", "histogram", "heatmap", "box", "violin", "image", "contour")  # traces with x/y axes
COLOURBAR_TRACES = ("heatmap", "contour", "histogram2d", "histogram2dcontour", "surface")  # show a colour bar unless told


def legend_below_axis_title(d: dict) -> dict:
    """The figure dict with a horizontal legend that sits under the plot moved below the x-axis title (plotly places
    it in the plot's fractions, so a fixed y = -0.14 lands on the title of a short plot or one with larger type)."""
    lay = d.setdefault("layout", {})
    legend = lay.get("legend") or {}
    if legend.get("orientation") != "h" or legend.get("y") is None or legend["y"] >= 0:
        return d
    px = (lay.get("font") or {}).get("size") or 12
    margin = lay.setdefault("margin", {})
    below = int(2 * px + 30)  # the tick labels and the axis title under the plot
    margin["b"] = max(margin.get("b") or 0, below + int(px * 1.6) + 12)  # ... and one row of legend
    # the legend at the figure's bottom edge (plotly's "container"), growing upwards, and the plot kept above it with
    # room for the axis: placed in the plot's fractions, a legend that wrapped to more rows than one (four in a
    # projector's narrow column) pushed the margin, the plot shrank, and its first row landed on the axis title
    legend.update(yref="container", y=0, yanchor="bottom")
    return d
