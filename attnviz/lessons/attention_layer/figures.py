"""The picture with one query's weights drawn over it, and the region mosaics of the permutation check.

A region's weight sets how much of it shows through a dark veil: the region with the largest weight is clear,
a region with weight 0 is 75 % dark. Hovering a region names it and gives its weight.
"""

from __future__ import annotations

import base64
import html
import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.draw.plotting import PICTURES_AT_TOP
from attnviz.lessons.attention_layer.regions import Regions

VEIL = [[0.0, "rgba(0,0,0,0.75)"], [1.0, "rgba(0,0,0,0)"]]  # weight 0 -> 75 % dark, the largest -> clear
FONT = {"size": 14}
TITLE_LINE = 12  # a mosaic title's characters per line: a quarter of a 390 px phone at 14 px type
# a region's weight written on it: white with a dark halo, legible on the veiled (dark) regions and on the clearest,
# where the picture shows through (white alone on the yellow sun was the answer of the lecture's step 3, unread)
VALUE_FONT = {"size": 13, "color": "white", "shadow": "0 0 2px #000, 0 0 3px #000, 0 0 4px #000"}
# the veil's colour bar, from the top of the plot down, and never taller than the picture beside it: a picture keeps
# its shape, so on a phone it is shorter than the plot (390 px wide: about 225 px of 354), and a bar of 0.9 of the plot
# was twice the grid's height. 180 px fits a 360 px phone's picture; a wider screen's picture is taller than the bar.
COLOUR_BAR_PX = 180
COLOUR_BAR = {"title": {"text": "weight", "side": "right"}, "tickfont": FONT, "thickness": 14, "lenmode": "pixels",
              "len": COLOUR_BAR_PX, "y": 1.0, "yanchor": "top"}


def _picture_source(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _add_weighted_picture(fig: go.Figure, png: bytes, regions: Regions, weights: np.ndarray, top: float,
                          show_values: bool, row: int = 1, col: int = 1, colorbar: bool = True) -> None:
    """The picture and its veil in one subplot; weights (N,) in reading order."""
    grid = np.asarray(weights, dtype=np.float64).reshape(regions.rows, regions.cols)  # (H, W)
    labels = np.asarray(regions.labels).reshape(regions.rows, regions.cols)  # (H, W)
    fig.add_trace(go.Image(source=_picture_source(png), hoverinfo="skip"), row=row, col=col)
    fig.add_trace(go.Heatmap(
        z=grid, x=regions.col_edges, y=regions.row_edges, zmin=0.0, zmax=top, colorscale=VEIL, customdata=labels,
        hovertemplate="region %{customdata}<br>weight %{z:.3f}<extra></extra>", showscale=colorbar,
        colorbar=COLOUR_BAR,
        texttemplate="%{z:.2f}" if show_values else None, textfont=VALUE_FONT,
        xgap=1, ygap=1), row=row, col=col)


def picture_with_weights(png: bytes, regions: Regions, weights, title: str) -> go.Figure:
    """One query's weights (N,) over the picture. title: its lines split by <br> (plotly does not wrap a title, and a
    phone's 358 px cut one line of it to "…over the 6 ×")."""
    fig = make_subplots(1, 1)
    w = np.asarray(weights, dtype=np.float64)
    _add_weighted_picture(fig, png, regions, w, float(w.max()), show_values=regions.n <= 48)
    _picture_axes(fig)
    lines = title.count("<br>") + 1
    fig.update_layout(height=370 + 20 * lines, margin={"l": 0, "r": 0, "t": 16 + 20 * lines, "b": 0},
                      title={"text": title, "font": FONT})
    return fig


def pictures_with_weights(png: bytes, regions: Regions, weights, names: list[str]) -> go.Figure:
    """M queries' weights (M, N), one picture each, side by side. Each picture on its own scale (its clearest region
    has that query's largest weight, written in its title): a query that spreads its weight would otherwise be
    dark all over beside one that picks a single region."""
    w = np.asarray(weights, dtype=np.float64)
    m = w.shape[0]
    # two short lines, not one: side by side on a 390 px phone, 'grass (max 0.15)' ran into its neighbours' titles
    titles = [f"{name}<br>max {w[i].max():.2f}" for i, name in enumerate(names)]
    fig = make_subplots(1, m, subplot_titles=titles, horizontal_spacing=0.015)
    for i in range(m):
        _add_weighted_picture(fig, png, regions, w[i], float(w[i].max()), show_values=False, col=i + 1, colorbar=False)
    _picture_axes(fig)
    fig.update_annotations(font=FONT)
    fig.update_layout(height=250, margin={"l": 0, "r": 0, "t": 56, "b": 0})  # room for two lines of 20 px titles
    return fig


def colours_as_pixels(colours, rows: int, cols: int) -> np.ndarray:
    """N colours (N, 3) in 0..1, in reading order -> a (H, W, 3) uint8 picture of one pixel per region."""
    rgb = np.clip(np.asarray(colours, dtype=np.float64), 0.0, 1.0)
    return np.round(rgb * 255).astype(np.uint8).reshape(rows, cols, 3)  # (H, W, 3)


def mosaics(panels: list[tuple[str, np.ndarray]]) -> go.Figure:
    """Pictures of one pixel per region, side by side: (title, (H, W, 3) uint8) each. A title is wrapped in lines of
    up to TITLE_LINE characters: four side by side on a 390 px phone, "X: each region's colour" on one line ran into
    its neighbours' titles (plotly does not wrap a title)."""
    titles = ["<br>".join(textwrap.wrap(t, TITLE_LINE)) for t, _ in panels]
    lines = max(t.count("<br>") + 1 for t in titles)
    fig = make_subplots(1, len(panels), subplot_titles=titles, horizontal_spacing=0.02)
    for i, (_, pixels) in enumerate(panels):
        fig.add_trace(go.Image(z=pixels, hovertemplate="place: row %{y}, column %{x}<br>colour %{z}<extra></extra>"),
                      row=1, col=i + 1)
    _picture_axes(fig)
    fig.update_annotations(font=FONT)
    # a title line's room at a projector's 20 px type too (its first line was cut at the top there)
    fig.update_layout(height=214 + 26 * lines, margin={"l": 0, "r": 0, "t": 4 + 26 * lines, "b": 0})
    return fig


def _picture_axes(fig: go.Figure) -> None:
    fig.update_layout(meta=PICTURES_AT_TOP)  # the page may cut the room left under them (a phone)
    fig.update_xaxes(visible=False, constrain="domain")
    # a picture narrower than its room (a phone) sits just under its title, not in the middle of the room
    fig.update_yaxes(visible=False, scaleanchor=None, constrain="domain", constraintoward="top")
    for axis in fig.layout:  # each picture keeps its shape
        if axis.startswith("yaxis"):
            x_name = "x" + axis[5:]
            fig.layout[axis].scaleanchor = x_name


def swatches_html(names: list[str], colours) -> str:
    """A coloured box per (name, colour (3,) in 0..1), with the colour written out as rgb(…)."""
    boxes = []
    for name, (r, g, b) in zip(names, np.clip(np.asarray(colours, dtype=float), 0, 1), strict=True):
        css = f"rgb({round(r * 255)}, {round(g * 255)}, {round(b * 255)})"
        boxes.append(f'<span style="display:inline-flex;align-items:center;margin:0 1rem .3rem 0">'
                     f'<span style="width:2.2rem;height:1.4rem;background:{css};border:1px solid #888;'
                     f'border-radius:3px;margin-right:.4rem"></span>{html.escape(name)}: {css}</span>')
    return "<div>" + "".join(boxes) + "</div>"
