"""LaTeX for the math beside the heatmaps, with the current numbers filled in."""

from __future__ import annotations

import math

import torch

MAX_MATRIX = 6  # larger masks are drawn as their top-left corner with ellipses


def fmt(x: float, digits: int = 3) -> str:
    """A number for LaTeX: -inf as -\\infty, small/large ones in scientific notation."""
    if math.isinf(x):
        return r"-\infty" if x < 0 else r"\infty"
    if math.isnan(x):
        return r"\text{undefined}"
    if x != 0 and (abs(x) < 10 ** -digits or abs(x) >= 10**5):
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        return rf"{mantissa}\times10^{{{int(exponent)}}}"
    return f"{x:.{digits}f}".rstrip("0").rstrip(".") if "." in f"{x:.{digits}f}" else f"{x}"


def scale_text(scale: float, d_k: int) -> str:
    """How the scores are scaled, in LaTeX: \\frac{QK^T}{\\sqrt{32}}, or QK^T · 0.25, or QK^T."""
    if math.isclose(scale, 1 / math.sqrt(d_k), rel_tol=1e-6):
        return rf"\frac{{QK^\top}}{{\sqrt{{{d_k}}}}}"
    if scale == 1.0:
        return r"QK^\top"
    return rf"QK^\top \cdot {fmt(scale)}"


def attention_equation(scale: float, d_k: int, masked: bool) -> str:
    """Attention(Q, K, V) = softmax(scaled scores + M) V, with this model's d_k and factor on line two."""
    m = " + M" if masked else ""
    if math.isclose(scale, 1 / math.sqrt(d_k), rel_tol=1e-6):
        numbers = rf"d_k = {d_k},\quad \tfrac{{1}}{{\sqrt{{d_k}}}} = {fmt(scale, 4)}"
    elif scale == 1.0:
        numbers = rf"d_k = {d_k},\quad \text{{no scaling (factor 1)}}"
    else:
        standard = fmt(1 / math.sqrt(d_k), 4)
        numbers = rf"d_k = {d_k},\quad \text{{factor }} {fmt(scale, 4)}\ \text{{instead of }} {standard}"
    softmax = rf"\mathrm{{softmax}}\!\left({scale_text(scale, d_k)}{m}\right)V"
    return rf"\small\begin{{gathered}}\mathrm{{Attention}}(Q,K,V) \\ = {softmax} \\ \small {numbers}\end{{gathered}}"


def mask_matrix(mask: torch.Tensor | None, n: int, limit: int = MAX_MATRIX) -> str:
    """M as a matrix: 0 where a query may attend, -∞ where it may not; corner only when large."""
    allowed = torch.ones(n, n, dtype=torch.bool) if mask is None else mask.reshape(n, n).bool()
    shown = min(n, limit)
    rows = []
    for i in range(shown):
        cells = ["0" if allowed[i, j] else r"-\infty" for j in range(shown)]
        if shown < n:
            cells.append(r"\cdots")
        rows.append(" & ".join(cells))
    if shown < n:
        rows.append(" & ".join([r"\vdots"] * shown + [r"\ddots"]))
    return r"\footnotesize M = \begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def multi_head_equation(n_heads: int, d_model: int, d_head: int | None = None) -> str:
    """d_head defaults to d_model / n_heads; a Llama-family config may set it apart, and then W_O maps
    n_heads · d_head (not d_model) back to d_model."""
    d_head = d_head or d_model // n_heads
    if n_heads * d_head == d_model:
        sizes = rf" d_{{model}} &= n_{{heads}} \cdot d_{{head}} = {n_heads}\cdot{d_head} = {d_model}"
    else:
        sizes = (rf" W_O &: n_{{heads}} \cdot d_{{head}} = {n_heads}\cdot{d_head} = {n_heads * d_head}"
                 rf" \to d_{{model}} = {d_model}")
    return (
        rf"\footnotesize\begin{{aligned}}\mathrm{{MultiHead}}(X) &= \mathrm{{Concat}}(\mathrm{{head}}_0,\dots,"
        rf"\mathrm{{head}}_{{{n_heads - 1}}})\,W_O \\"
        rf" &= \textstyle\sum_{{h=0}}^{{{n_heads - 1}}} \mathrm{{head}}_h\, W_O^{{h}} \\"
        rf"{sizes}\end{{aligned}}"
    )
