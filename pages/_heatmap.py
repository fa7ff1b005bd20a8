"""The one way pages draw a matrix of attention (or any matrix of numbers) as a heatmap.

Every page calls `heatmap` / `heatmap_grid`; how it is drawn lives here, so the whole app changes
drawing in one place. Today this draws with plotly (attnviz.draw.plotting); the canvas component
of issue 7 replaces the body, not the calls. Tests read what was drawn through
tests/apptest_helpers.drawn_heatmap, which follows the same switch.

kind:
    "weights"  softmax weights: one shared 0..1 colour scale, hover names query, key and weight
    "signed"   any signed matrix (scores, |Δ| differences, outputs): diverging scale centred at 0, −inf grey
"""

from __future__ import annotations

import streamlit as st

KINDS = ("weights", "signed")


def heatmap(matrix, row_labels: list[str], col_labels: list[str] | None = None, *, key: str, title: str = "",
            kind: str = "weights", x_title: str = "key (attended to)", show_values: bool | None = None,
            limit: float | None = None) -> None:
    """One (rows, cols) matrix. col_labels None = the same tokens as the rows (self-attention);
    for a signed matrix None means numbered feature columns. limit: signed colour range ±limit."""
    from attnviz.draw.plotting import head_figure
    from attnviz.lessons.step_by_step.figures import signed_heatmap

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    if kind == "weights":
        fig = head_figure(matrix, row_labels, title, show_values=show_values, col_labels=col_labels)
    else:
        fig = signed_heatmap(matrix, row_labels, col_labels, title, show_values=bool(show_values), x_title=x_title,
                             limit=limit)
    st.plotly_chart(fig, width="stretch", key=key)


def heatmap_grid(matrices, row_labels: list[str], col_labels: list[str] | None = None, *, key: str,
                 titles: list[str], kind: str = "weights", columns: int = 3) -> None:
    """Several matrices of one shape side by side (e.g. every head of a layer), each with its title."""
    cols = st.columns(min(columns, len(titles)))
    for i, (matrix, title) in enumerate(zip(matrices, titles, strict=True)):
        with cols[i % len(cols)]:
            heatmap(matrix, row_labels, col_labels, key=f"{key}_{i}", title=title, kind=kind)
