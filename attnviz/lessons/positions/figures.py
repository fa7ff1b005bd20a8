"""Charts and LaTeX for the positions page. Matrices go through ui/heatmap_widget; here: lines, scatter, equations."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from attnviz.draw.latex import fmt
from attnviz.draw.palette import GREY, LIGHT_GREY, PAIR, REFERENCE, WEIGHTS, plotly_scale
from attnviz.lessons.positions.encodings import DistanceProfile

COLOURS = {"sinusoidal": PAIR[0], "learned": PAIR[1]}


def distance_profile_figure(profiles: dict[str, DistanceProfile], from_distance: int = 1) -> go.Figure:
    """G against the distance Δ: the mean over all pairs Δ apart as a line, their min..max as a band.

    Δ = 0 (the squared lengths) is left out by default: it is a different quantity and dwarfs the rest.
    """
    fig = go.Figure()
    for name, prof in profiles.items():
        colour = COLOURS.get(name.split()[0], REFERENCE)
        keep = slice(from_distance, None)
        x = prof.distance[keep].numpy()
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]),
                                 y=np.concatenate([prof.high[keep].numpy(), prof.low[keep].numpy()[::-1]]),
                                 fill="toself", fillcolor=colour, opacity=0.2, line={"width": 0},
                                 name=f"{name}: min..max", hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=prof.mean[keep].numpy(), mode="lines", line={"color": colour, "width": 2},
                                 name=f"{name}: mean", hovertemplate="Δ = %{x}<br>mean PE_i·PE_j = %{y:.3f}<extra></extra>"))
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend={"orientation": "h", "y": -0.25},
                      title={"text": f"dot product of positions i and j against their distance Δ = |i − j| "
                                     f"(Δ ≥ {from_distance}): mean line, min..max band", "font": {"size": 13}},
                      xaxis_title="distance Δ = |i − j|", yaxis_title="dot product")
    return fig


def pair_track_figure(track, pair: int, angle_step: float, label: str = "q") -> go.Figure:
    """The pair's point at positions 0..T−1: all on one circle, each step turned by θ_p."""
    pts = np.asarray(track, dtype=np.float64)  # (T, 2)
    radius = float(np.hypot(*pts[0]))
    ring = np.linspace(0, 2 * math.pi, 181)
    fig = go.Figure(go.Scatter(x=radius * np.cos(ring), y=radius * np.sin(ring), mode="lines", hoverinfo="skip",
                               line={"color": LIGHT_GREY, "dash": "dot"}, showlegend=False))
    fig.add_trace(go.Scatter(
        x=pts[:, 0], y=pts[:, 1], mode="lines+markers+text", text=[str(t) for t in range(len(pts))],
        textposition="top right", marker={"size": 9, "color": np.arange(len(pts)), "colorscale": plotly_scale(WEIGHTS)},
        line={"color": GREY, "width": 1}, showlegend=False,
        hovertemplate=f"position %{{text}}<br>{label}[{pair}] = %{{x:.3f}}<br>{label}[{pair}+D/2] = %{{y:.3f}}<extra></extra>"))
    lim = radius * 1.25
    fig.update_xaxes(range=[-lim, lim], zeroline=True, title_text=f"{label}[{pair}] (first of the pair)")
    fig.update_yaxes(range=[-lim, lim], zeroline=True, scaleanchor="x", scaleratio=1,
                     title_text=f"{label}[{pair} + D/2] (second)")
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      title={"text": f"pair {pair}: turns {math.degrees(angle_step):.3g}° per position; length stays "
                                     f"{radius:.3f}", "font": {"size": 13}})
    return fig


def sinusoidal_latex(d_model: int) -> str:
    return (r"\begin{aligned}PE_{(pos,\,2i)} &= \sin\!\left(pos\,/\,10000^{2i/d}\right)\\"
            r"PE_{(pos,\,2i+1)} &= \cos\!\left(pos\,/\,10000^{2i/d}\right)\qquad d = " + str(d_model) + r"\end{aligned}")


def sinusoidal_dot_latex() -> str:
    return (r"\begin{aligned}PE_i\cdot PE_j&=\sum_k \sin(i\omega_k)\sin(j\omega_k)+\cos(i\omega_k)\cos(j\omega_k)\\"
            r"&=\sum_k\cos\big((i-j)\,\omega_k\big),\qquad \omega_k = 10000^{-2k/d}\end{aligned}")


def rope_latex(theta: float | None, d_head: int) -> str:
    """The rotation of pair p at position t; θ_p = base^(−2p/D) when the model uses plain RoPE."""
    freq = rf"\theta_p = {theta:g}^{{-2p/{d_head}}}" if theta else r"\theta_p\ \text{from the model's rescaled RoPE}"
    return (r"\begin{pmatrix}x'_p\\x'_{p+D/2}\end{pmatrix}=\begin{pmatrix}\cos t\theta_p & -\sin t\theta_p\\"
            r"\sin t\theta_p & \cos t\theta_p\end{pmatrix}\begin{pmatrix}x_p\\x_{p+D/2}\end{pmatrix},\quad" + freq)


def rope_score_latex(i: int, j: int, s: int, a: float, b: float) -> str:
    """s(i, j) = (R_i q)·(R_j k) = q·R_{j−i} k, with two measured values side by side."""
    return (r"\begin{aligned}(R_i q)\cdot(R_j k) &= q^\top R_i^\top R_j\, k = q^\top R_{j-i}\, k\\"
            rf"s({i},{j}) &= {fmt(a, 4)},\quad s({i + s},{j + s}) = {fmt(b, 4)}\end{{aligned}}")


def permutation_latex() -> str:
    return (r"\begin{aligned}\mathrm{softmax}\!\left(\frac{(PQ)(PK)^\top}{\sqrt{d_k}}\right)PV"
            r"&= P\,\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)P^\top P V\\"
            r"&= P\,\mathrm{Attention}(Q,K,V)\qquad (P^\top P = I)\end{aligned}")
