"""Plotly charts of the KV-cache lesson (matrices are drawn by the page through _heatmap)."""

from __future__ import annotations

import plotly.graph_objects as go


def timing_figure(cached: tuple[list[int], list[float]], full: tuple[list[int], list[float]]) -> go.Figure:
    """Milliseconds per generated token against the context length, with and without the cache.
    cached, full: (context lengths, ms) as `step_times` or `median_step_times` return them."""
    fig = go.Figure()
    for (x, y), name in ((full, "without cache (whole context recomputed)"), (cached, "with KV cache (newest token only)")):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name,
                                 hovertemplate="%{x} tokens of context: %{y:.2f} ms<extra></extra>"))
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.12),
                      xaxis_title="tokens of context at this step", yaxis_title="ms per new token",
                      yaxis_rangemode="tozero")
    return fig


def timing_sentence(cached: tuple[list[int], list[float]], full: tuple[list[int], list[float]]) -> str:
    """What the timing chart shows, said truthfully: where the cached step was not faster, and why that can be."""
    without = dict(zip(*full, strict=True))
    pairs = [(x, ms, without[x]) for x, ms in zip(*cached, strict=True) if x in without]
    slower = [x for x, with_cache, recomputed in pairs if with_cache >= recomputed]
    if not slower:
        return f"Here the cached step was faster at every one of the {len(pairs)} context lengths."
    at = ", ".join(map(str, slower[:6])) + (", …" if len(slower) > 6 else "")
    return (f"At {len(slower)} of the {len(pairs)} context lengths ({at} tokens) the cached step was not faster. That "
            "is not the cache failing: on a model this small a step's time is mostly fixed costs paid once per call, "
            "whatever the number of tokens (Python, starting each of the layers' operations, picking the next token), "
            "so recomputing a few dozen tokens costs hardly more than computing one, while writing to and reading from "
            "the cache costs a little too; timings on a shared server also wobble. The saving grows with the model's "
            "size and the context's length.")


def memory_figure(rows: list[dict], title: str) -> go.Figure:
    """Bars: KV-cache bytes per token for MHA / this model / MQA."""
    fig = go.Figure(go.Bar(x=[r["attention"] for r in rows], y=[r["bytes per token"] for r in rows],
                           text=[f"{r['bytes per token']:,} B" for r in rows], textposition="auto",
                           hovertemplate="%{x}: %{y:,} bytes per token<extra></extra>"))
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=40, b=10), title=title, yaxis_title="bytes per token")
    return fig
