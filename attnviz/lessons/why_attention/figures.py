"""Figures and LaTeX for the Why attention page. The numbers come from bottleneck.py (the shipped GRU models run
by attnviz's own code); here they only get drawn. The fixed-size vector is always orange, attention always blue."""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.draw.palette import GREY, PAIR
from attnviz.lessons.why_attention.bottleneck import Alignment, LengthCurve

ATTENTION_COLOUR, BOTTLENECK_COLOUR = PAIR


def accuracy_figure(curve: LengthCurve, mark_bin: int | None = None) -> go.Figure:
    """Exact match per source-length bin, a bar per model; mark_bin rings the bin the typed sentence falls in."""
    fig = go.Figure()
    for name, values, colour in (("one fixed-size vector", curve.bottleneck, BOTTLENECK_COLOUR),
                                 ("additive attention", curve.attention, ATTENTION_COLOUR)):
        pct = [100 * v for v in values]
        fig.add_trace(go.Bar(
            x=curve.bins, y=pct, name=name, marker_color=colour, text=[f"{p:.1f}%" for p in pct],
            textposition="outside", textfont={"size": 15}, customdata=curve.n,
            hovertemplate=f"{name}<br>%{{x}} words: %{{y:.1f}}% exact<br>%{{customdata}} held-out sentences"
                          "<extra></extra>"))
    if mark_bin is not None:  # a band behind the bars, named under the axis where no bar label can cover it
        fig.add_vrect(x0=mark_bin - 0.5, x1=mark_bin + 0.5, fillcolor=GREY, opacity=0.15, line_width=0)
        fig.update_xaxes(tickvals=curve.bins, ticktext=[f"<b>{b}: your sentence</b>" if i == mark_bin else b
                                                        for i, b in enumerate(curve.bins)])
    fig.update_layout(barmode="group", height=370, margin={"l": 60, "r": 10, "t": 30, "b": 72},
                      legend={"orientation": "h", "y": 1.12, "x": 0}, font={"size": 15},
                      yaxis={"title": {"text": "written exactly right (%)"}, "range": [0, 112]},
                      xaxis={"title": {"text": f"source length in words and commas<br>({curve.size:,} held-out sentences)"}})
    return fig


def bin_of(curve: LengthCurve, n_words: int) -> int | None:
    """The index of the bin holding a source of n_words words, or None when no bin does."""
    for i, label in enumerate(curve.bins):
        low, high = (int(x) for x in label.split("–"))
        if low <= n_words <= high:
            return i
    return None


def encoder_decoder_latex() -> str:
    """The two models' one difference: what the decoder reads at output step i."""
    return (r"\underbrace{c_i = z = [\overrightarrow{h}_S ; \overleftarrow{h}_1]}_{\text{fixed-size vector}}"
            r"\qquad\text{vs}\qquad"
            r"\underbrace{c_i = \sum_j \alpha_{ij}\, h_j,\ \ "
            r"\alpha_{ij} = \operatorname{softmax}_j\!\big(v^\top \tanh(W_a s_{i-1} + U_a h_j + b_a)\big)}"
            r"_{\text{additive attention}}")


def encoder_decoder_legend() -> str:
    """What each symbol of encoder_decoder_latex is (markdown with inline math)."""
    return (r"$j = 1 \dots S$: the source tokens the encoder reads, $S$ of them (the words and commas, between "
            r"<s> and </s>); $h_j = [\overrightarrow{h}_j ; \overleftarrow{h}_j]$: the annotation of token $j$, "
            r"its forward and backward GRU states side by side; $s_{i-1}$: the decoder's state before it writes "
            r"output $i$; $c_i$: what the decoder reads at step $i$; $\alpha_{ij}$: the weight of token $j$ there.")


def strongest_source(al: Alignment) -> list[tuple[str, str, float]]:
    """Per output step: (digit written, the source word with the largest α, that α)."""
    best = al.weights.max(dim=-1)
    return [(out, al.source_labels[int(j)], float(w))
            for out, j, w in zip(al.output_labels, best.indices, best.values, strict=True)]
