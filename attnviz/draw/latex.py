"""LaTeX for the math beside the heatmaps, with the current numbers filled in."""

from __future__ import annotations

import math

import torch

from attnviz.engine.attention import is_standard_scale

MAX_MATRIX = 5  # larger masks: their first rows/columns, ⋯, and the last two (where [PAD] keys are)


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
    if is_standard_scale(scale, d_k):
        return rf"\frac{{QK^\top}}{{\sqrt{{{d_k}}}}}"
    if scale == 1.0:
        return r"QK^\top"
    return rf"QK^\top \cdot {fmt(scale)}"


def attention_equation(scale: float, d_k: int, masked: bool) -> str:
    """Attention(Q, K, V) = softmax(S) V with S = scaled scores (+ M), one short line each.

    Every line stays narrow (about 20 characters of math) so the block fits a third of a 1024-px
    screen: KaTeX never wraps a formula itself, so the lines are broken here.
    """
    m = " + M" if masked else ""
    if is_standard_scale(scale, d_k):
        numbers = [rf"d_k = {d_k},\ \tfrac{{1}}{{\sqrt{{d_k}}}} = {fmt(scale, 4)}"]
    elif scale == 1.0:
        numbers = [rf"d_k = {d_k}", r"\text{no scaling (factor 1)}"]
    else:
        standard = fmt(1 / math.sqrt(d_k), 4)
        numbers = [rf"d_k = {d_k},\ \text{{factor }} {fmt(scale, 4)}", rf"\text{{instead of }} {standard}"]
    lines = [r"\mathrm{Attention}(Q,K,V)", r"= \mathrm{softmax}(S)\,V", rf"S = {scale_text(scale, d_k)}{m}",
             *(rf"\small {line}" for line in numbers)]
    return r"\small\begin{gathered}" + r" \\ ".join(lines) + r"\end{gathered}"


def shown_positions(n: int, limit: int = MAX_MATRIX) -> list[int | None]:
    """Which rows/columns of an n×n matrix to draw: all when n <= limit, else the first ones, None for
    the gap (⋯), and the last two, where [PAD] tokens (always appended at the end) and causal's corner are."""
    if n <= limit:
        return list(range(n))
    tail = 2
    head = limit - tail
    return [*range(head), None, *range(n - tail, n)]


def mask_matrix(mask: torch.Tensor | None, n: int, limit: int = MAX_MATRIX) -> str:
    """M as a matrix labelled with query rows i and key columns j: 0 where a query may attend, -∞ where
    it may not. Large masks show their first and last rows and columns, so appended [PAD] key columns
    and the far corner of a causal mask are always on screen."""
    allowed = torch.ones(n, n, dtype=torch.bool) if mask is None else mask.reshape(n, n).bool()
    pos = shown_positions(n, limit)
    cell = lambda i, j: "0" if allowed[i, j] else r"-\infty"
    header = " & ".join([r"{\scriptstyle i \backslash j}"] + [r"\cdots" if j is None else rf"\scriptstyle {j}" for j in pos])
    rows = [header]
    for i in pos:
        if i is None:
            rows.append(" & ".join([r"\vdots"] + [r"\ddots" if j is None else r"\vdots" for j in pos]))
            continue
        cells = [r"\cdots" if j is None else cell(i, j) for j in pos]
        rows.append(" & ".join([rf"\scriptstyle {i}"] + cells))
    spec = "r|" + "c" * len(pos)
    body = r" \\ ".join(rows[:1]) + r" \\ \hline " + r" \\ ".join(rows[1:])
    return rf"\footnotesize M = \left[\begin{{array}}{{{spec}}}" + body + r"\end{array}\right]"


def multi_head_equation(n_heads: int, d_model: int, d_head: int | None = None) -> str:
    """MultiHead(X) = Concat(heads) W_O + b_O = Σ_h head_h W_O^h + b_O, and d_model = n_heads · d_head,
    one short line each so it fits a narrow column. d_head defaults to d_model / n_heads; a Llama-family
    config may set it apart, and then W_O maps n_heads · d_head (not d_model) back to d_model."""
    d_head = d_head or d_model // n_heads
    last = n_heads - 1
    if n_heads * d_head == d_model:
        sizes = [r"d_{model} = n_{heads} \cdot d_{head}", rf"= {n_heads}\cdot{d_head} = {d_model}"]
    else:
        sizes = [rf"W_O: n_{{heads}} \cdot d_{{head}} = {n_heads}\cdot{d_head} = {n_heads * d_head}",
                 rf"\to d_{{model}} = {d_model}"]
    lines = [
        r"\mathrm{MultiHead}(X)",
        rf"= \mathrm{{Concat}}(\mathrm{{head}}_0,\dots,\mathrm{{head}}_{{{last}}})",
        r"\quad \cdot W_O + b_O",
        rf"= \textstyle\sum_{{h=0}}^{{{last}}} \mathrm{{head}}_h\, W_O^{{h}} + b_O",
        *sizes,
    ]
    return r"\footnotesize\begin{gathered}" + r" \\ ".join(lines) + r"\end{gathered}"
