"""Charts for the encoder-layer page: one token's vector at a stage, and the residual stream over layers."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.draw.palette import GREY, NEGATIVE, POSITIVE, STREAM  # red = positive, blue = negative, as in the signed heatmaps
from attnviz.lessons.encoder_layer.norms import StreamNorms


def vector_bars(vec, title: str, first: int) -> go.Figure:
    """The first `first` features of one token's vector as signed bars."""
    values = [float(v) for v in vec[:first]]
    fig = go.Figure(go.Bar(
        x=list(range(len(values))), y=values, marker_color=[POSITIVE if v >= 0 else NEGATIVE for v in values],
        hovertemplate="feature %{x}<br>value %{y:.4f}<extra></extra>",
    ))
    fig.update_layout(title={"text": title, "font": {"size": 12}}, height=210, margin={"l": 10, "r": 10, "t": 36, "b": 10},
                      xaxis={"title": {"text": f"feature (first {len(values)} of {vec.numel()})", "font": {"size": 11}},
                             "dtick": max(1, len(values) // 16)},
                      yaxis={"title": {"text": "value", "font": {"size": 11}}, "zeroline": True})
    return fig


def stream_figure(norms: StreamNorms) -> go.Figure:
    """Left: ‖x‖, ‖attention's update‖, ‖FFN's update‖ per layer. Right: relative change per layer."""
    layers = list(range(len(norms.x_in)))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.1,
                        subplot_titles=("norms (mean over tokens of ‖·‖₂)",  # the right one on two lines: its column
                                        "relative change<br>‖x_out − x_in‖ / ‖x_in‖"))  # is 40% of a 1024 px page
    for (y, name), color in zip(((norms.x_in, "‖x‖ entering the layer"), (norms.attn_update, "‖attention's update‖"),
                                 (norms.ffn_update, "‖FFN's update‖")), STREAM, strict=True):
        fig.add_trace(go.Scatter(x=layers, y=[float(v) for v in y], name=name, mode="lines+markers",
                                 line={"color": color}, hovertemplate="layer %{x}: %{y:.3f}<extra>" + name + "</extra>"),
                      row=1, col=1)
    fig.add_trace(go.Bar(x=layers, y=[float(v) for v in norms.relative_change], name="relative change",
                         marker_color=GREY, hovertemplate="layer %{x}: %{y:.1%}<extra></extra>", showlegend=False),
                  row=1, col=2)
    fig.update_xaxes(title_text="layer", dtick=1)
    fig.update_yaxes(rangemode="tozero")
    fig.update_yaxes(tickformat=".0%", row=1, col=2)
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10},
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    return fig


def stages_heatmap(stages: list[tuple[str, object]], title: str, first: int) -> go.Figure:
    """One position's vector at every stage of a layer, one row per stage in the order they run (top to bottom):
    the first `first` features of each (stages: (row name, 1-D vector)), red positive, blue negative, one colour
    scale for all rows (a pale row is a small vector, not a rescaled one)."""
    names = [name for name, _ in stages]
    z = [[float(v) for v in vec[:first]] for _, vec in stages]  # (stages, ≤ first)
    widest = max(len(row) for row in z)
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(widest)), y=names, zmid=0,
        colorscale=[[0.0, NEGATIVE], [0.5, "#ffffff"], [1.0, POSITIVE]],
        colorbar={"title": {"text": "value"}, "thickness": 14},
        hovertemplate="%{y}<br>feature %{x}<br>value %{z:.4f}<extra></extra>",
    ))
    fig.update_layout(title={"text": title, "font": {"size": 12}}, height=80 + 30 * len(names),
                      margin={"l": 10, "r": 10, "t": 36, "b": 10},
                      xaxis={"title": {"text": f"feature (the first {widest} of each)", "font": {"size": 11}},
                             "dtick": max(1, widest // 16)},
                      yaxis={"autorange": "reversed", "type": "category"})
    return fig
