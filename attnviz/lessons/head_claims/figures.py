"""The Head claims page's chart: the chosen heads' knock-out against every other set of the same size."""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.analysis.ablation_effects import SetComparison
from attnviz.draw.palette import BASELINE, CHOSEN, MUTED, REFERENCE
from attnviz.lessons.head_claims.text import head_name


def comparison_figure(comparison: SetComparison, outcome_name: str, unit: str, chance: float | None) -> go.Figure:
    """Every compared set's outcome, sorted (grey), the chosen set (red), the unablated value and the chance line."""
    ranked = sorted(comparison.others, key=lambda sv: sv[1])
    names = [" + ".join(head_name(*h) for h in heads) for heads, _ in ranked]
    fig = go.Figure(go.Scatter(
        x=list(range(1, len(ranked) + 1)), y=[v for _, v in ranked], mode="markers", name="other sets",
        marker=dict(color=MUTED, size=7), customdata=names,
        hovertemplate="%{customdata}: %{y:.3f}<extra></extra>"))
    position = sum(v < comparison.chosen_value for _, v in ranked) + 0.5
    fig.add_trace(go.Scatter(
        x=[position], y=[comparison.chosen_value], mode="markers", name="your set",
        marker=dict(color=CHOSEN, size=14, symbol="diamond"),
        hovertemplate=" + ".join(head_name(*h) for h in comparison.chosen) + ": %{y:.3f}<extra></extra>"))
    fig.add_hline(y=comparison.baseline, line_color=BASELINE,
                  annotation_text=f"nothing knocked out: {comparison.baseline:.3f}", annotation_position="top left")
    if chance is not None:
        fig.add_hline(y=chance, line_dash="dash", line_color=REFERENCE,
                      annotation_text=f"chance: ln V ≈ {chance:.2f}", annotation_position="bottom right")
    fig.update_layout(height=330, margin=dict(l=10, r=10, t=30, b=10), showlegend=True,
                      legend=dict(orientation="h", y=1.12, x=0),
                      xaxis_title=("single heads" if len(comparison.chosen) == 1 else
                                   f"sets of {len(comparison.chosen)} heads") + ", least damage first",
                      yaxis_title=f"{outcome_name}{f' ({unit})' if unit else ''}", yaxis_rangemode="tozero")
    return fig
