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


def step_sentence(step: int, n_context: int, newest: str, picked: str, head: int, kv_head: int, n_heads: int,
                  n_kv_heads: int) -> str:
    """What one decoding step computed, in markdown. Step i writes new token i + 1 (a question about "the 10th new
    token" is about step 9). Step 0 is the prefill: the cache starts empty, so it computes every prompt token's keys
    and values; each later step computes the newest token's alone and reads the others from the cache."""
    said = (f"Step {step} writes new token {step + 1}: the context holds **{n_context} tokens**; the newest, "
            f"**{newest}**, asks what comes next, and the model picks **{picked}**. Query head {head} reads K/V head "
            f"{kv_head} (shared by {n_heads // n_kv_heads} query heads).")
    if step == 0:
        return said + (f" This first step is the prefill: the cache starts empty, so in each layer it computed the keys "
                       f"and values of all {n_context} prompt tokens ({n_kv_heads} keys and {n_kv_heads} values per "
                       "token, one per K/V head) and stored them. Each later step computes only its newest token's "
                       f"{n_heads} queries, **{n_kv_heads} keys** and {n_kv_heads} values, and reads the rest from the "
                       "cache.")
    return said + (f" With the cache this step computed, in each layer, {n_heads} new queries (one per query head) but "
                   f"only **{n_kv_heads} new keys** and {n_kv_heads} new values (one per K/V head): the last row of K "
                   f"and V below; the other {n_context - 1} rows were read from memory.")


def memory_figure(rows: list[dict], title: str) -> go.Figure:
    """Bars: KV-cache bytes per token for MHA / this model / MQA."""
    fig = go.Figure(go.Bar(x=[r["attention"] for r in rows], y=[r["bytes per token"] for r in rows],
                           text=[f"{r['bytes per token']:,} B" for r in rows], textposition="auto",
                           hovertemplate="%{x}: %{y:,} bytes per token<extra></extra>"))
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=40, b=10), title=title, yaxis_title="bytes per token")
    return fig
