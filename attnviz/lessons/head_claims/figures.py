"""The Head claims page's chart: the chosen heads' knock-out against every other set of the same size."""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.analysis.ablation_effects import SetComparison
from attnviz.draw.palette import BASELINE, CHOSEN, MUTED, REFERENCE
from attnviz.lessons.head_claims.text import head_name


def comparison_figure(comparison: SetComparison, outcome_name: str, unit: str, chance: float | None) -> go.Figure:
    """Every compared set's outcome, sorted (grey), the chosen set (red), the unablated value and the chance line (both
    named in the legend)."""
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
    # the two reference values as lines across the chart named in the legend, not written on the chart: there the
    # words sat on the least damaging sets' dots, which lie near the unablated value
    across = [0.5, len(ranked) + 1]
    fig.add_trace(go.Scatter(x=across, y=[comparison.baseline] * 2, mode="lines", line=dict(color=BASELINE),
                             name=f"nothing knocked out: {comparison.baseline:.3f}", hoverinfo="skip"))
    if chance is not None:
        fig.add_trace(go.Scatter(x=across, y=[chance] * 2, mode="lines", line=dict(color=REFERENCE, dash="dash"),
                                 name=f"chance: ln V ≈ {chance:.2f}", hoverinfo="skip"))
    fig.update_layout(height=330, margin=dict(l=10, r=10, t=30, b=10), showlegend=True,
                      legend=dict(orientation="h", y=1.02, x=0, yanchor="bottom"),  # rows grow up, off the plot
                      xaxis_title=("single heads" if len(comparison.chosen) == 1 else
                                   f"sets of {len(comparison.chosen)} heads") + ", least damage first",
                      yaxis_title=f"{outcome_name}{f' ({unit})' if unit else ''}", yaxis_rangemode="tozero")
    return fig
