"""Each step's equations, with the shapes for the grid on screen (H, W, N, D, M, D_k, D_v as in __init__)."""

from __future__ import annotations


def shapes_line(rows: int, cols: int, d: int) -> str:
    return (rf"X \in \mathbb{{R}}^{{N \times D}},\quad N = H \cdot W = {rows} \cdot {cols} = {rows * cols},"
            rf"\quad D = {d}")


def one_query_latex(rows: int, cols: int, d: int) -> list[str]:
    n = rows * cols
    return [rf"X \in \mathbb{{R}}^{{N \times D}},\; N = H \cdot W = {rows} \cdot {cols} = {n},\; D = {d}",
            rf"q \in \mathbb{{R}}^{{{d}}},\qquad e_j = \frac{{q \cdot x_j}}{{\sqrt{{D}}}} \quad (j = 1 \ldots {n})",
            rf"a = \operatorname{{softmax}}(e) \in \mathbb{{R}}^{{{n}}},\qquad "
            rf"y = \sum_j a_j\, x_j \in \mathbb{{R}}^{{{d}}}"]


def many_queries_latex(rows: int, cols: int, d: int, m: int) -> list[str]:
    n = rows * cols
    return [shapes_line(rows, cols, d) + rf",\qquad Q \in \mathbb{{R}}^{{M \times D}} = \mathbb{{R}}^{{{m} \times {d}}}",
            rf"E = \frac{{Q X^\top}}{{\sqrt{{D}}}} \in \mathbb{{R}}^{{{m} \times {n}}},\quad "
            rf"A = \operatorname{{softmax}}_{{\text{{row}}}}(E),\quad Y = A X \in \mathbb{{R}}^{{{m} \times {d}}}"]


def keys_values_latex(rows: int, cols: int, d: int, m: int, d_k: int, d_v: int) -> list[str]:
    n = rows * cols
    return [rf"K = X W_K \in \mathbb{{R}}^{{N \times D_k}} = \mathbb{{R}}^{{{n} \times {d_k}}},\qquad "
            rf"V = X W_V \in \mathbb{{R}}^{{N \times D_v}} = \mathbb{{R}}^{{{n} \times {d_v}}},\qquad "
            rf"Q \in \mathbb{{R}}^{{{m} \times {d_k}}}",
            rf"A = \operatorname{{softmax}}\!\Big(\frac{{Q K^\top}}{{\sqrt{{D_k}}}}\Big) \in \mathbb{{R}}^{{{m} \times {n}}}"
            rf",\qquad Y = A V \in \mathbb{{R}}^{{{m} \times {d_v}}}"]


def self_attention_latex(rows: int, cols: int, d: int, d_k: int, d_v: int) -> list[str]:
    n = rows * cols
    return [rf"Q = X W_Q,\;\; K = X W_K \in \mathbb{{R}}^{{{n} \times {d_k}}},\qquad V = X W_V \in "
            rf"\mathbb{{R}}^{{{n} \times {d_v}}}",
            rf"f(X) = \operatorname{{softmax}}\!\Big(\frac{{Q K^\top}}{{\sqrt{{D_k}}}}\Big) V \in "
            rf"\mathbb{{R}}^{{{n} \times {d_v}}},\qquad f(P X) = P\, f(X)"]
