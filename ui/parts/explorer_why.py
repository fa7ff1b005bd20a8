"""'Why this weight': the arithmetic of one cell of the explorer, beside the grid.

The numbers come from attnviz.lessons.step_by_step (head_steps, pair_detail: the model's own trace) and
their LaTeX from its latex module, so the explorer and Step by step always show the same arithmetic.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from attnviz.analysis.contribution import contribution_norms
from attnviz.draw.describe import scale_name
from attnviz.draw.text import markdown_literal as md
from attnviz.lessons.step_by_step.latex import (
    TOP_TERMS,
    dot_product_latex,
    mask_entry_latex,
    scaled_latex,
    softmax_latex,
)
from attnviz.lessons.step_by_step.steps import pair_detail
from ui import heatmap_widget as hm
from ui.runs import run_for, traced_head
from ui.scale_swap import flipped_scale_state


def plain(x: float) -> str:
    """A number for markdown text: 4 decimals, a real minus sign, −∞ for a masked score."""
    if x == float("-inf"):
        return "−∞"
    return f"{x:.4f}".replace("-", "−")


def why_this_weight(view) -> None:
    """The panel for the view's selected cell (head, query i, key j) in its layer."""
    model, sel, layer = view.model, view.selection, view.layer
    i, j = sel.query, sel.key
    steps = traced_head(view.model_spec, view.device, view.text, view.mask_spec, view.scale, layer, sel.head)
    pair = pair_detail(steps, i, j)
    labels = steps.labels
    st.markdown(f"**Layer {layer}, head {sel.head}: query {i} “{md(labels[i])}” → key {j} “{md(labels[j])}”**")
    every = model.d_head <= 8
    st.latex(dot_product_latex(i, j, pair.q_i, pair.k_j, pair.dot, top=None if every else TOP_TERMS, per_line=1))
    if not every:
        st.caption(f"d_head = {model.d_head}: the {TOP_TERMS} largest products (by size) are written out, "
                   f"the other {model.d_head - TOP_TERMS} are added up under the ⋯.")
    st.latex(scaled_latex(i, j, pair.dot, pair.scale, model.d_head))
    st.latex(mask_entry_latex(i, j, pair.allowed, pair.scaled))
    if not pair.allowed:
        st.info("The mask forbids this pair: M = −∞, so its score is −∞ and e^−∞ = 0. Its weight is exactly 0, "
                "whatever q·k was.", icon=":material/block:")
    st.latex(softmax_latex(i, j, pair.row, pair.weight, limit=2))
    st.markdown(f"In short: q·k = `{plain(pair.dot)}` · × s = `{plain(pair.scaled)}` · + M = "
                f"`{plain(pair.scaled if pair.allowed else float('-inf'))}` · softmax → **weight `{plain(pair.weight)}`**")
    # the row names its scale: when the switch flips, the browser swaps in the other state's row at once, while
    # the arithmetic above follows with the rerun (see attnviz/draw/heatmap_switch.py)
    # (the scale first: a narrow panel drops the title's trailing " · " part, never the scale)
    row_title = f"row {i}, scores × {{}} · after the softmax (sums to 1)"
    other = flipped_scale_state(view, len(labels), layer)
    hm.heatmap(steps.weights[i][None], [f"{i}: {labels[i]}"], labels, key="why_row",
               title=row_title.format(scale_name(pair.scale, model.d_head)),
               selection={"panel": 0, "row": 0, "col": j}, show_values=len(labels) <= 12,
               other_state=other and dataclasses.replace(
                   other, data=other.data.attentions[layer, sel.head, i][None],
                   title=row_title.format(scale_name(other.data.scale, model.d_head))))
    st.caption(f"The ringed cell is this weight, A[{i}, {j}]; the other cells are the rest of row {i}.")


def weight_against_contribution(view) -> None:
    """The selected cell's row twice over the same keys: each weight α_ij, and the size of what that key adds to
    the head's output, ‖α_ij · (x_j W_V + b_V) W_O^h‖ (Kobayashi et al. 2020), from the run's own trace."""
    sel, layer = view.selection, view.layer
    i, j = sel.query, sel.key
    res = run_for(view.model_spec, view.device, view.text, view.mask_spec, view.scale, True)
    labels = res.labels
    alpha = res.traces[layer].weights[0, sel.head, i]  # (n,)
    norms = contribution_norms(view.model, res.traces, layer)[0, sel.head, i]  # (n,)
    ring = {"panel": 0, "row": 0, "col": j}
    small = len(labels) <= 12
    hm.heatmap(alpha[None], [f"{i}: {labels[i]}"], labels, key="why_alpha", selection=ring, show_values=small,
               title=f"row {i}: weight α (sums to 1)")
    hm.heatmap(norms[None], [f"{i}: {labels[i]}"], labels, key="why_norm", kind="magnitude", selection=ring,
               show_values=small, title=f"row {i}: what each key adds · ‖α·v W_O‖", value_name=("‖α·v·W_O‖", "norm"))
    share = float(norms[j] / norms.sum()) if float(norms.sum()) > 0 else 0.0
    st.caption(f"Key {j} “{labels[j]}” gets weight {plain(float(alpha[j]))} ({float(alpha[j]):.0%} of the row) and "
               f"adds a vector of length {plain(float(norms[j]))} ({share:.0%} of the row's total length). A key with "
               "a short value vector adds little however much weight it gets (Kobayashi et al. 2020).")
