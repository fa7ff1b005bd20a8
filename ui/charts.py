"""The one way pages draw a plotly chart: `plotly_chart(where, fig, key=...)` (ui/charts.py), where =
st or a container or column.

On a projector (presentation mode) the figure's type is enlarged to 20 px and more (attnviz.draw.plotting
.projector_figure). Plotly's toolbar never shows: at the top right of the chart it covered the chart's title, on a
projector and on a phone (where a tap is a hover); dragging still pans or zooms, a double click resets, and the
chart's own full-screen button stays.
"""

from __future__ import annotations

from attnviz.draw.plotting import figure_dict, legend_below_axis_title, projector_figure
from ui.present import presenting


def plotly_chart(where, fig, *, config: dict | None = None, **kwargs):
    """where.plotly_chart (where: st, a container or a column) with the projector's type when presenting."""
    config = {"displaylogo": False, **(config or {}), "displayModeBar": False}
    kwargs.setdefault("width", "stretch")
    shown = projector_figure(fig) if presenting() else legend_below_axis_title(figure_dict(fig))
    return where.plotly_chart(shown, config=config, **kwargs)
