"""Figures and LaTeX for the scaling lab (why attention divides by √d_k). The numbers come from
attnviz.lessons.scaling.experiments; here they only get drawn. Unscaled is always orange, scaled always blue."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.draw.latex import fmt
from attnviz.draw.palette import GREY, LIGHT_GREY, PAIR
from attnviz.errors import AttnvizError
from attnviz.lessons.scaling.experiments import GradientExperiment, SaturationExperiment, VarianceExperiment

D_K_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the widths every experiment is run at
FACTOR_STEPS = (0.25, 0.35, 0.5, 0.71, 1.0, 1.41, 2.0, 2.83, 4.0, 5.66, 8.0)  # × 1/√d_k, about √2 apart
SCALED, UNSCALED = PAIR
HISTOGRAM_BINS = 61
HISTOGRAM_SIGMAS = 5  # the bins span ±5 standard deviations of the unscaled q·k: nearly every sample


def _index_of(d_k_values: np.ndarray, d_k: int) -> int:
    hits = np.flatnonzero(np.asarray(d_k_values) == d_k)
    if hits.size == 0:
        raise AttnvizError(f"d_k = {d_k} was not part of this experiment (it ran {list(map(int, d_k_values))}).")
    return int(hits[0])


def _labelled_powers(values) -> list[int]:
    """Every third power of 2 among the values (1, 8, 64, 512), and the largest: ten labels of 20 px on a projector's
    narrow column turned upright and ran into the legend under the axis; four stay level."""
    ticks = [int(v) for v in values]
    kept = [t for t in ticks if t > 0 and (t & (t - 1)) == 0 and (t.bit_length() - 1) % 3 == 0]
    return kept + ([ticks[-1]] if ticks and ticks[-1] not in kept else [])


def _log2_axis(d_k_values) -> dict:
    """An x axis for d_k: logarithmic, a grid line at each value tried (1, 2, 4, ...), labelled at _labelled_powers.
    (Ticks outside the plot would push its labels and title down onto a legend under the axis.)"""
    ticks = [int(d) for d in d_k_values]
    labelled = _labelled_powers(ticks)
    return {"type": "log", "tickvals": labelled, "ticktext": [str(d) for d in labelled], "tickangle": 0,
            "minor": {"tickvals": ticks, "showgrid": True}, "title": {"text": "d_k"}}


def _variance_axis(d_k_values) -> dict:
    """The y axis of Var(q·k): logarithmic, labelled at the same powers as the d_k axis (up to 512, where the line
    d_k ends: decades stopped at 100, under half of it)."""
    labelled = _labelled_powers(d_k_values)
    return {"type": "log", "tickvals": labelled, "ticktext": [str(d) for d in labelled],
            "title": {"text": "variance (log scale)"}}


def _highlight(fig: go.Figure, x: float, ys: list[float], row=None, col=None) -> None:
    """Ring the points of the d_k the slider picked."""
    fig.add_trace(go.Scatter(x=[x] * len(ys), y=ys, mode="markers", name=f"d_k = {x:g}", showlegend=False,
                             marker={"size": 14, "color": "rgba(0,0,0,0)", "line": {"color": "#000000", "width": 2}},
                             hoverinfo="skip"), row=row, col=col)


# ---- (a) the variance of q·k ------------------------------------------------------------------


def shared_histograms(a: np.ndarray, b: np.ndarray, bins: int = HISTOGRAM_BINS,
                      half_width: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Probability densities of two samples on the same bins: (bin centres, density a, density b, bin width).

    Same bins for both, so the picture compares spreads honestly: density = count / (N · width),
    so each histogram's area is the share of its samples inside the range (about 1).
    """
    half = half_width if half_width is not None else HISTOGRAM_SIGMAS * max(float(np.std(a)), float(np.std(b)), 1.0)
    edges = np.linspace(-half, half, bins + 1)
    width = float(edges[1] - edges[0])
    dens_a = np.histogram(a, bins=edges)[0] / (len(a) * width)
    dens_b = np.histogram(b, bins=edges)[0] / (len(b) * width)
    centres = (edges[:-1] + edges[1:]) / 2
    return centres.astype(np.float32), dens_a.astype(np.float32), dens_b.astype(np.float32), width


def dot_product_histogram_figure(exp: VarianceExperiment, d_k: int) -> go.Figure:
    """Overlaid histograms of q·k and q·k/√d_k at one d_k, on shared bins."""
    i = _index_of(exp.d_k, d_k)
    centres, unscaled, scaled, width = shared_histograms(exp.unscaled[i], exp.scaled[i])
    fig = go.Figure([
        go.Bar(x=centres, y=unscaled, width=width, name="q·k (unscaled)", marker_color=UNSCALED, opacity=0.6,
               hovertemplate="q·k ≈ %{x:.2f}<br>density %{y:.3f}<extra></extra>"),
        go.Bar(x=centres, y=scaled, width=width, name="q·k / √d_k (scaled)", marker_color=SCALED, opacity=0.6,
               hovertemplate="q·k/√d_k ≈ %{x:.2f}<br>density %{y:.3f}<extra></extra>"),
    ])
    # the legend well below the axis title: at y = -0.2 presentation mode's larger type put "score" on it
    fig.update_layout(barmode="overlay", height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10},  # two-line title:
                      title=f"{exp.unscaled.shape[1]} random pairs q, k ~ N(0, I)<br>at d_k = {d_k}",  # half a page
                      legend={"orientation": "h", "y": -0.3}, xaxis_title="score", yaxis_title="density")
    return fig


def variance_figure(exp: VarianceExperiment, highlight: int | None = None) -> go.Figure:
    """Measured variance against d_k, both axes logarithmic: unscaled follows the line d_k, scaled stays at 1."""
    d = exp.d_k.astype(float)
    fig = go.Figure([
        go.Scatter(x=d, y=exp.expected_unscaled_variance, name="theory: d_k", mode="lines",
                   line={"color": UNSCALED, "dash": "dot"}, hoverinfo="skip"),
        go.Scatter(x=d, y=exp.unscaled_variance, name="measured Var(q·k)", mode="lines+markers",
                   line={"color": UNSCALED}, hovertemplate="d_k = %{x}<br>Var(q·k) = %{y:.3f}<extra></extra>"),
        go.Scatter(x=d, y=np.ones_like(d), name="theory: 1", mode="lines", line={"color": SCALED, "dash": "dot"},
                   hoverinfo="skip"),
        go.Scatter(x=d, y=exp.scaled_variance, name="measured Var(q·k/√d_k)", mode="lines+markers",
                   line={"color": SCALED}, hovertemplate="d_k = %{x}<br>Var(q·k/√d_k) = %{y:.3f}<extra></extra>"),
    ])
    if highlight is not None:
        i = _index_of(exp.d_k, highlight)
        _highlight(fig, highlight, [float(exp.unscaled_variance[i]), float(exp.scaled_variance[i])])
    fig.update_layout(xaxis=_log2_axis(exp.d_k), yaxis=_variance_axis(exp.d_k),
                      # two lines, as the histogram's beside it: one was cut on a projector beside the class's answers
                      height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10}, title="Variance of the score<br>against d_k",
                      legend={"orientation": "h", "y": -0.25})
    return fig


def variance_latex(d_k: int, measured_unscaled: float, measured_scaled: float) -> str:
    """Var(q·k) = Σ_m Var(q_m k_m) = d_k, and divided by √d_k it is 1, with this d_k and the measurements."""
    return (
        r"\begin{aligned}"
        rf"\mathrm{{Var}}(q\cdot k) &= \sum_{{m=1}}^{{d_k}} \mathrm{{Var}}(q_m k_m) = d_k \cdot 1 = {d_k}"
        rf"&&\text{{measured: }} {fmt(measured_unscaled, 2)} \\"
        rf"\mathrm{{Var}}\!\left(\tfrac{{q\cdot k}}{{\sqrt{{d_k}}}}\right) &= \tfrac{{d_k}}{{d_k}} = 1"
        rf"&&\text{{measured: }} {fmt(measured_scaled, 3)}"
        r"\end{aligned}"
    )


# ---- (b) softmax saturation and (c) its gradient --------------------------------------------------


def saturation_figure(sat: SaturationExperiment, highlight: int | None = None) -> go.Figure:
    """Two panels against d_k: the mean entropy of a softmax row and its mean largest weight."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=(
        f"entropy of a softmax row (nats; ceiling ln {sat.n_keys} = {sat.max_entropy:.2f})",
        "largest weight in the row"))
    d = sat.d_k.astype(float)
    panels = ((1, sat.entropy_unscaled, sat.entropy_scaled, "H"), (2, sat.max_weight_unscaled, sat.max_weight_scaled, "max"))
    for col, unscaled, scaled, what in panels:
        first = col == 1
        fig.add_trace(go.Scatter(x=d, y=unscaled, name="unscaled softmax(q·k)", legendgroup="u", showlegend=first,
                                 mode="lines+markers", line={"color": UNSCALED},
                                 hovertemplate=f"d_k = %{{x}}<br>{what} = %{{y:.3f}}<extra>unscaled</extra>"), 1, col)
        fig.add_trace(go.Scatter(x=d, y=scaled, name="scaled softmax(q·k/√d_k)", legendgroup="s", showlegend=first,
                                 mode="lines+markers", line={"color": SCALED},
                                 hovertemplate=f"d_k = %{{x}}<br>{what} = %{{y:.3f}}<extra>scaled</extra>"), 1, col)
        if highlight is not None:
            i = _index_of(sat.d_k, highlight)
            _highlight(fig, highlight, [float(unscaled[i]), float(scaled[i])], row=1, col=col)
        fig.update_xaxes(_log2_axis(sat.d_k), row=1, col=col)
    fig.add_hline(y=sat.max_entropy, line={"dash": "dot", "color": GREY}, row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=2)
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": -0.25})
    fig.update_annotations(font_size=12)
    return fig


def gradient_figure(grad: GradientExperiment, highlight: int | None = None) -> go.Figure:
    """‖J‖_F of the softmax Jacobian against d_k: unscaled collapses toward 0, scaled holds steady."""
    d = grad.d_k.astype(float)
    fig = go.Figure([
        go.Scatter(x=d, y=grad.jacobian_norm_unscaled, name="unscaled: J at q·k", mode="lines+markers",
                   line={"color": UNSCALED}, hovertemplate="d_k = %{x}<br>‖J‖ = %{y:.4f}<extra>unscaled</extra>"),
        go.Scatter(x=d, y=grad.jacobian_norm_scaled, name="scaled: J at q·k/√d_k", mode="lines+markers",
                   line={"color": SCALED}, hovertemplate="d_k = %{x}<br>‖J‖ = %{y:.4f}<extra>scaled</extra>"),
    ])
    if highlight is not None:
        i = _index_of(grad.d_k, highlight)
        _highlight(fig, highlight, [float(grad.jacobian_norm_unscaled[i]), float(grad.jacobian_norm_scaled[i])])
    fig.update_layout(xaxis=_log2_axis(grad.d_k), yaxis={"title": {"text": "‖J‖_F (mean)"}, "rangemode": "tozero"},
                      height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      title="How much gradient the softmax lets through", legend={"orientation": "h", "y": -0.25})
    return fig


def jacobian_latex() -> str:
    """The softmax Jacobian and why a one-hot row blocks the gradient."""
    return (
        r"J = \frac{\partial p}{\partial s} = \mathrm{diag}(p) - p\,p^\top,\qquad "
        r"\frac{\partial \mathcal{L}}{\partial s} = J^\top \frac{\partial \mathcal{L}}{\partial p},\qquad "
        r"p \to e_j\ (\text{one-hot}) \;\Rightarrow\; J \to 0"
    )


def entropy_latex(n_keys: int) -> str:
    return rf"H(p) = -\sum_j p_j \ln p_j,\qquad 0 \le H \le \ln {n_keys} = {fmt(math.log(n_keys), 3)}"


# ---- (d) the real model under another factor -----------------------------------------------------


def factor_scale(factor: float, d_k: int) -> float:
    """The factor the model multiplies QKᵀ by: factor × 1/√d_k (factor 1 = as trained)."""
    if not factor > 0:
        raise AttnvizError(f"The scale factor must be positive, got {factor}.")
    return float(factor) / math.sqrt(d_k)


def factor_latex(factor: float, d_k: int) -> str:
    """softmax(factor · QKᵀ/√d_k) with the numbers: the factor the model actually uses."""
    return (
        rf"\mathrm{{softmax}}\!\left({fmt(factor, 2)}\cdot\frac{{QK^\top}}{{\sqrt{{{d_k}}}}}\right)"
        rf" = \mathrm{{softmax}}\!\left(QK^\top \cdot {fmt(factor_scale(factor, d_k), 4)}\right)"
        rf"\qquad \text{{trained: }} \tfrac{{1}}{{\sqrt{{{d_k}}}}} = {fmt(1 / math.sqrt(d_k), 4)}"
    )


def entropy_per_layer_figure(at_factor, trained, factor: float, n_tokens: int) -> go.Figure:
    """Mean attention entropy per layer at this factor against the trained factor (×1)."""
    at_factor, trained = np.asarray(at_factor, dtype=float), np.asarray(trained, dtype=float)
    if at_factor.shape != trained.shape:
        raise AttnvizError(f"Entropy curves of different lengths: {at_factor.shape} and {trained.shape}.")
    layers = list(range(len(trained)))
    fig = go.Figure([
        go.Scatter(x=layers, y=trained, name="trained (×1)", mode="lines+markers", line={"color": GREY},
                   hovertemplate="layer %{x}<br>H = %{y:.3f} nats<extra>trained</extra>"),
        go.Scatter(x=layers, y=at_factor, name=f"×{factor:g}", mode="lines+markers",
                   line={"color": UNSCALED if factor > 1 else SCALED},
                   hovertemplate=f"layer %{{x}}<br>H = %{{y:.3f}} nats<extra>×{factor:g}</extra>"),
    ])
    fig.add_hline(y=math.log(max(n_tokens, 1)), line={"dash": "dot", "color": LIGHT_GREY},
                  annotation_text=f"uniform: ln {n_tokens}", annotation_position="bottom right")
    fig.update_layout(xaxis={"title": {"text": "layer"}, "tickvals": layers}, height=340,
                      yaxis={"title": {"text": "mean row entropy (nats)"}, "rangemode": "tozero"},
                      margin={"l": 10, "r": 10, "t": 60, "b": 10}, title="Mean attention entropy<br>per layer",
                      legend={"orientation": "h", "y": -0.25})
    return fig


def factor_from_url(raw, options=FACTOR_STEPS) -> float | None:
    """The factor option a link names, however it is spelled ("4", "4.0", "4.00", "0.50"); None when the
    text is not one of the options. Streamlit matches a bound select_slider's URL value against the
    formatted option ("4") only, so a shared link with scale_factor=4.0 would otherwise be ignored."""
    if isinstance(raw, list):
        raw = raw[-1] if raw else None
    try:
        value = float(str(raw).strip())
    except (TypeError, ValueError):
        return None
    return next((o for o in options if math.isclose(o, value, rel_tol=1e-9, abs_tol=1e-9)), None)
