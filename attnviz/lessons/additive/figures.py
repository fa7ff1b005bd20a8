"""Charts and LaTeX for the additive vs dot-product page. Matrices go through ui/heatmap."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.draw.latex import fmt
from attnviz.draw.palette import PAIR
from attnviz.draw.plotting import DECADE_LABELS
from attnviz.lessons.additive.cost import Cost

DOT, ADDITIVE = PAIR  # the two kinds of score compared


def cost_figure(cost: Cost) -> go.Figure:
    """Time and materialised bytes against n, both log-log, additive orange and dot-product blue."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=(
        "time for scores + softmax (fastest run, one thread)", "memory the scores materialise"))
    for name, colour, secs, size in (("additive", ADDITIVE, cost.additive_seconds, cost.additive_bytes),
                                     ("dot-product", DOT, cost.dot_seconds, cost.dot_bytes)):
        fig.add_trace(go.Scatter(x=cost.ns, y=[s * 1e3 for s in secs], mode="lines+markers", name=name,
                                 line={"color": colour}, legendgroup=name,
                                 hovertemplate=f"{name}<br>n = %{{x}}<br>%{{y:.3g}} ms<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=cost.ns, y=[b / 2**20 for b in size], mode="lines+markers", name=name,
                                 line={"color": colour}, legendgroup=name, showlegend=False,
                                 hovertemplate=f"{name}<br>n = %{{x}}<br>%{{y:.3g}} MiB<extra></extra>"), row=1, col=2)
    ticks = {"type": "log", "tickvals": cost.ns, "ticktext": [str(n) for n in cost.ns], "title": {"text": "n (tokens)"}}
    fig.update_xaxes(**ticks)
    fig.update_yaxes(type="log", **DECADE_LABELS)
    fig.update_yaxes(title_text="milliseconds", row=1, col=1)
    fig.update_yaxes(title_text="MiB (float32)", row=1, col=2)
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": -0.25})
    fig.update_annotations(font_size=13)
    return fig


LOSS_FLOOR = 1e-9  # KL values below this are float32 rounding (they even dip below 0): drawn at the floor


def loss_figure(losses: list[float]) -> go.Figure:
    """The fit's loss per Adam step, on a log scale (it falls by orders of magnitude); rounding noise at the floor."""
    fig = go.Figure(go.Scatter(x=list(range(len(losses))), y=[max(x, LOSS_FLOOR) for x in losses], mode="lines",
                               line={"color": ADDITIVE}, hovertemplate="step %{x}<br>KL %{y:.3g}<extra></extra>"))
    fig.update_yaxes(type="log", title_text="KL(dot ‖ add)", minorloglabels="none", exponentformat="power")
    fig.update_xaxes(title_text="Adam step")
    fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title={"text": "fit loss per Adam step", "font": {"size": 13}})
    return fig


def duration_text(seconds: float) -> str:
    """A readable duration: '0.652 ms', '48.1 ms', '1.02 s'."""
    return f"{seconds:.3g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def additive_latex(d: int, d_a: int) -> str:
    return (r"e_{ij} = v^\top \tanh\!\left(W q_i + U k_j\right),\quad "
            rf"W \in \mathbb{{R}}^{{{d_a}\times{d}}},\ U \in \mathbb{{R}}^{{{d_a}\times{d}}},\ v \in \mathbb{{R}}^{{{d_a}}}")


def dot_latex(d: int) -> str:
    return (rf"s_{{ij}} = \frac{{q_i \cdot k_j}}{{\sqrt{{d_k}}}},\quad d_k = {d},\ "
            rf"\tfrac{{1}}{{\sqrt{{d_k}}}} = {fmt(1 / math.sqrt(d), 4)}")


def softmax_latex() -> str:
    return (r"\alpha_{ij} = \frac{\exp(\text{score}_{ij})}{\sum_{j'} \exp(\text{score}_{ij'})},"
            r"\qquad \text{out}_i = \sum_j \alpha_{ij} v_j")


def entry_latex(i: int, j: int, e: float, s: float, a_add: float, a_dot: float) -> str:
    """One (query, key) entry both ways: the two scores and the two weights the code computed."""
    return (rf"e_{{{i}{j}}} = {fmt(e, 4)},\ \ \alpha^{{\text{{add}}}}_{{{i}{j}}} = {fmt(a_add, 4)}"
            rf"\qquad s_{{{i}{j}}} = {fmt(s, 4)},\ \ \alpha^{{\text{{dot}}}}_{{{i}{j}}} = {fmt(a_dot, 4)}")
