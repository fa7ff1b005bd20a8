"""Charts for the multi-head anatomy page (bars; matrices go through the pages' heatmap call)."""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.draw.palette import OTHER, OWN
from attnviz.lessons.multihead.grouping import CacheRow, format_bytes


def kv_cache_figure(rows: list[CacheRow], title: str) -> go.Figure:
    """One bar per K/V head count; the model's own count in a darker colour and named so."""
    x = [f"{r.variant}<br>{r.n_kv_heads} K/V head{'s' if r.n_kv_heads > 1 else ''}"
         + ("<br>(this model)" if r.is_models_own else "") for r in rows]
    mib = [r.bytes / 2**20 for r in rows]
    colors = [OWN if r.is_models_own else OTHER for r in rows]
    fig = go.Figure(go.Bar(
        x=x, y=mib, marker_color=colors, text=[format_bytes(r.bytes) for r in rows], textposition="outside",
        hovertemplate="%{x}<br>%{y:.3f} MiB<extra></extra>", cliponaxis=False,
    ))
    fig.update_layout(title={"text": title, "font": {"size": 13}}, height=340, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      yaxis_title="KV cache (MiB)", xaxis={"type": "category"})
    fig.update_yaxes(range=[0, max(mib) * 1.18])
    return fig
