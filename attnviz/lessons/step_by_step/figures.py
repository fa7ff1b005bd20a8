"""Small heatmaps for the step-by-step page: signed matrices on a diverging scale centred at 0.

Weights (0..1) use attnviz.draw.plotting.head_figure and its shared colour axis. Masked scores are -inf,
which no colour scale can hold: those cells are left empty in the signed heatmap (no hover) and
drawn by a second, grey trace that reads "−∞".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.plotting import distinct_labels, head_figure
from attnviz.lessons.step_by_step.steps import HeadSteps

SIGNED_COLORSCALE = "RdBu_r"  # blue < 0 < red, white at 0
MASKED_COLOR = "#9e9e9e"
MINUS_INFINITY = "−∞"
VALUE_TEMPLATE = "%{z:.2f}"
SQUARE_VALUES_UP_TO = 16  # n × n matrices print their numbers only up to this many tokens (cells get narrow)


def symmetric_limit(z: np.ndarray) -> float:
    """max |finite z|, so that 0 sits in the middle of the colour scale (1 when there is nothing finite)."""
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def percentile_limit(z: np.ndarray, q: float = 99.0) -> float:
    """The q-th percentile of |finite z|: a colour range that a few outlier features cannot wash out."""
    finite = np.abs(z[np.isfinite(z)])
    return float(np.percentile(finite, q)) if finite.size and finite.max() > 0 else 1.0


def signed_heatmap(matrix, row_labels: list[str], col_labels: list[str] | None, title: str,
                   show_values: bool = False, x_title: str = "feature", height: int | None = None,
                   limit: float | None = None) -> go.Figure:
    """A (rows, cols) matrix on a diverging scale centred at 0; -inf cells grey and labelled −∞.

    col_labels None = numbered feature columns 0..cols-1; otherwise categorical (token) columns.
    limit: the colour range ±limit (default: this matrix's own max |value|); hover always shows true values.
    """
    z = np.asarray(matrix, dtype=np.float32)  # (rows, cols)
    rows, cols = z.shape
    minus_inf = np.isneginf(z)
    z_shown = np.where(minus_inf, np.nan, z).astype(np.float32)  # gaps, covered by the grey trace below
    x = distinct_labels(col_labels) if col_labels is not None else list(range(cols))
    y = distinct_labels(row_labels)
    limit = limit or symmetric_limit(z)
    trace = go.Heatmap(
        z=z_shown, x=x, y=y, zmid=0.0, zmin=-limit, zmax=limit, colorscale=SIGNED_COLORSCALE, hoverongaps=False,
        colorbar={"len": 0.9, "thickness": 12}, name=title,
        hovertemplate=f"row: %{{y}}<br>{x_title}: %{{x}}<br>value: %{{z:.4f}}<extra></extra>",
    )
    if show_values:
        trace.update(texttemplate=VALUE_TEMPLATE, textfont={"size": 10})
    fig = go.Figure(trace)
    if minus_inf.any():
        fig.add_trace(masked_cells_trace(minus_inf, x, y))
    fig.update_xaxes(title_text=x_title, type="category" if col_labels is not None else "linear",
                     tickangle=-60 if col_labels is not None else 0, tickfont={"size": 10})
    fig.update_yaxes(autorange="reversed", type="category", tickfont={"size": 10})
    fig.update_layout(title={"text": title, "font": {"size": 13}}, height=height or figure_height(rows),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def masked_cells_trace(minus_inf: np.ndarray, x, y) -> go.Heatmap:
    """Grey cells reading −∞ where minus_inf is True; transparent gaps elsewhere."""
    z = np.where(minus_inf, 1.0, np.nan).astype(np.float32)
    text = np.where(minus_inf, MINUS_INFINITY, "").tolist()
    return go.Heatmap(
        z=z, x=x, y=y, text=text, texttemplate="%{text}", textfont={"size": 10, "color": "white"},
        colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]], zmin=0, zmax=1, showscale=False, hoverongaps=False,
        name="masked",
        hovertemplate="query: %{y}<br>key: %{x}<br>masked: M = −∞<extra></extra>",
    )


def frame_head_columns(fig: go.Figure, head: int, d_head: int, n_heads: int) -> go.Figure:
    """Dotted lines between the heads' column blocks of Concat, and a frame around `head`'s block."""
    for h in range(1, n_heads):
        fig.add_vline(x=h * d_head - 0.5, line={"color": "black", "width": 1, "dash": "dot"})
    fig.add_vrect(x0=head * d_head - 0.5, x1=(head + 1) * d_head - 0.5, line={"color": "black", "width": 3},
                  fillcolor="rgba(0,0,0,0)")
    return fig


def figure_height(rows: int) -> int:
    return int(min(700, max(260, 22 * rows + 130)))


def step_figure(steps: HeadSteps, key: str, show_values: bool = False) -> go.Figure:
    """The heatmap of one step card (keys as in attnviz.lessons.step_by_step.latex.step_cards, plus "Q", "K", "V").

    show_values prints the numbers in the cells: for narrow matrices (n × d_head) on the toy model, and
    for the n × n ones only while n stays small enough for the numbers to fit.
    """
    labels, n = steps.labels, len(steps.labels)
    n_square = show_values and n <= SQUARE_VALUES_UP_TO
    C, hs = steps.x.shape[1], steps.d_head
    if key == "weights":
        return head_figure(steps.weights, labels, f"A = softmax(S″), head {steps.head}", show_values=n_square)
    if key in ("scores", "scaled", "masked"):
        matrix, title = {"scores": (steps.scores, "S = Q Kᵀ"), "scaled": (steps.scaled, "S′ = S · s"),
                         "masked": (steps.masked_scores, "S″ = S′ + M")}[key]
        # one colour range for S, S′ and S″, so that the scaling visibly shrinks (or grows) the scores
        shared = max(symmetric_limit(np.asarray(steps.scores)), symmetric_limit(np.asarray(steps.scaled)))
        return signed_heatmap(matrix, labels, labels, f"{title}  ({n} × {n}), colours ±{shared:.3g} shared by S, S′, S″",
                              n_square, x_title="key", limit=shared)
    matrix, title = {
        "x": (steps.x, f"X  ({n} × {C})"), "Q": (steps.q, f"Q  ({n} × {hs})"), "K": (steps.k, f"K  ({n} × {hs})"),
        "V": (steps.v, f"V  ({n} × {hs})"), "head": (steps.head_out, f"head {steps.head} = A V  ({n} × {hs})"),
        "concat": (steps.concat, f"Concat  ({n} × {C})"), "out": (steps.attn_out, f"Concat · W_O + b_O  ({n} × {C})"),
    }[key]
    if key == "x":  # a few outlier features of real models would wash every other cell out to white
        clip = percentile_limit(np.asarray(matrix))
        return signed_heatmap(matrix, labels, None, f"{title}, colours clipped at ±{clip:.3g} (99th percentile)",
                              show_values, limit=clip)
    fig = signed_heatmap(matrix, labels, None, title, show_values)
    return frame_head_columns(fig, steps.head, hs, steps.n_heads) if key == "concat" else fig


@dataclass(frozen=True)
class StepMatrix:
    """What the page hands to pages/_heatmap.heatmap for one step: the matrix and how to label and colour it."""

    matrix: np.ndarray  # (rows, cols); -inf where masked (S″ only)
    row_labels: list[str]
    col_labels: list[str] | None  # None = numbered feature columns
    title: str
    kind: str  # "weights" (A, 0..1) or "signed" (everything else, centred at 0)
    limit: float | None  # signed colour range ±limit (None = the matrix's own)
    show_values: bool
    x_title: str = "feature"


def step_matrix(steps: HeadSteps, key: str, show_values: bool = False) -> StepMatrix:
    """The matrix of one step card (keys as in step_cards, plus "Q", "K", "V"), as the page draws it.

    S, S′ and S″ share one colour range so that the scaling visibly shrinks (or grows) the scores; X is
    clipped at the 99th percentile (a few outlier features of real models would wash everything out).
    """
    labels, n = steps.labels, len(steps.labels)
    n_square = show_values and n <= SQUARE_VALUES_UP_TO
    C, hs = steps.x.shape[1], steps.d_head
    as_array = lambda t: np.asarray(t, dtype=np.float32)
    if key == "weights":
        return StepMatrix(as_array(steps.weights), labels, labels, f"A = softmax(S″), head {steps.head}", "weights",
                          None, n_square, "key")
    if key in ("scores", "scaled", "masked"):
        matrix, title = {"scores": (steps.scores, "S = Q Kᵀ"), "scaled": (steps.scaled, "S′ = S · s"),
                         "masked": (steps.masked_scores, "S″ = S′ + M")}[key]
        shared = max(symmetric_limit(as_array(steps.scores)), symmetric_limit(as_array(steps.scaled)))
        return StepMatrix(as_array(matrix), labels, labels, f"{title} ({n} × {n}), colours ±{shared:.3g} shared by "
                          "S, S′, S″", "signed", shared, n_square, "key")
    matrix, title = {
        "x": (steps.x, f"X ({n} × {C})"), "Q": (steps.q, f"Q ({n} × {hs})"), "K": (steps.k, f"K ({n} × {hs})"),
        "V": (steps.v, f"V ({n} × {hs})"), "head": (steps.head_out, f"head {steps.head} = A V ({n} × {hs})"),
        "concat": (steps.concat, f"Concat ({n} × {C}), head {steps.head}'s columns {steps.head * hs}–"
                                 f"{(steps.head + 1) * hs - 1}"),
        "out": (steps.attn_out, f"Concat · W_O + b_O ({n} × {C})"),
    }[key]
    z = as_array(matrix)
    if key == "x":
        clip = percentile_limit(z)
        return StepMatrix(z, labels, None, f"{title}, colours clipped at ±{clip:.3g} (99th percentile)", "signed",
                          clip, show_values)
    return StepMatrix(z, labels, None, title, "signed", None, show_values)
