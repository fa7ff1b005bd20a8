"""Plotly charts of the induction lesson (the score maps are matrices: pages draw them with _heatmap)."""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.draw.palette import REFERENCE, SHADE_FIRST, SHADE_SECOND
from attnviz.lessons.induction.probe import InductionProbe


def loss_figure(p: InductionProbe) -> go.Figure:
    """Per-token loss along the sequence, the two copies shaded: the second copy's loss drops if induction works."""
    positions = list(range(1, len(p.ids)))  # loss[p - 1] is the loss of predicting token p
    labels = p.labels[1:]
    fig = go.Figure(go.Scatter(
        x=positions, y=p.loss.tolist(), mode="lines+markers", name="loss", customdata=labels,
        hovertemplate="token %{x} (%{customdata}): loss %{y:.2f} nats<extra></extra>",
    ))
    f, P = p.first, p.period
    for start, name, colour in ((f, "first copy", SHADE_FIRST), (f + P, "second copy", SHADE_SECOND)):
        # each label just above the plot area: inside it, the labels sat on the first points
        fig.add_vrect(x0=start - 0.5, x1=start + P - 0.5, fillcolor=colour, line_width=0,
                      annotation_text=name, annotation_position="top left", annotation_yanchor="bottom")
    if p.vocab_size:
        fig.add_hline(y=p.chance_loss, line_dash="dash", line_color=REFERENCE,
                      annotation_text=f"chance: ln {p.vocab_size:,} ≈ {p.chance_loss:.2f}",
                      annotation_position="bottom right")
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=40, b=10), showlegend=False,
                      xaxis_title="token position (the token being predicted)",
                      yaxis_title="loss = −log p(token), nats", yaxis_rangemode="tozero")
    return fig


def score_axis_labels(n_layers: int, n_heads: int) -> tuple[list[str], list[str]]:
    """Row labels 'layer 0'.. and column labels 'head 0'.. for an (L, H) score map."""
    return [f"layer {i}" for i in range(n_layers)], [f"head {h}" for h in range(n_heads)]
