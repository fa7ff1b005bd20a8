"""Query–key space (after AttentionViz): one head's queries and keys projected together onto a plane by PCA, a
point per token, lines for the strongest pairs; a click on a point highlights that query's row.

URL keys (besides the shared ones: text, model, mask, scaled, layer, ...):
    qk_head       the head
    qk_row        the highlighted query token: its position, or its text ("it": the first occurrence); none = none
    qk_space      shared (AttentionViz's normalization, the default) or raw (as the layer computed them)
    qk_threshold  lines are drawn for pairs whose weight is at least this (0.05 to 1)
e.g. /qk_space?layer=3&qk_head=1&qk_row=10
"""

import streamlit as st

import ui
from attnviz.analysis.qk_space import head_queries_and_keys, strongest_pairs
from attnviz.lessons.qk_space import (
    SPACES,
    agreement_sentence,
    clicked_token,
    lines_sentence,
    plane_of,
    plane_sentence,
    plane_title,
    qk_figure,
    row_table,
    space_sentence,
    vectors_name,
    which_vectors,
)
from ui.charts import plotly_chart
from ui.present import presenting, table_height
from ui.token_link import keep_token_in_link, settle_token, token_drawn

PLOT = "qk_plot"


def take_click(n: int) -> None:
    """A clicked query or key point highlights that token's query row. Runs as the chart's on_select (before the
    rerun) and again before the row picker is drawn (AppTest writes the chart's state without callbacks). The
    chart keeps its last click in its state and the browser sends it with every rerun, so a click is taken once:
    otherwise it would undo each later choice in the row picker."""
    raw = st.session_state.get(PLOT)
    points = None if raw is None else str(raw)
    if points == st.session_state.get("_qk_taken_click"):
        return
    st.session_state["_qk_taken_click"] = points
    token = clicked_token(raw, n)
    if token is not None:
        st.session_state["qk_row"] = token


view = ui.open_page(
    "Query–key space (AttentionViz)",
    "Each token has a query (what it looks for) and a key (what it offers). Here one head's queries and keys are "
    "projected together onto the plane that keeps most of their spread (PCA), a point per token; lines join the "
    "pairs with the most weight. Click a point to highlight its query's row.")

with ui.guard("Query–key space"):
    controls = st.columns([1, 1, 2.2, 1.8, 2.2], vertical_alignment="bottom")
    view, head = ui.page.layer_and_head("qk_head", "The plane appears", where=controls[:2])
    model, layer = view.model, view.layer
    res = view.run(keep=True)
    ui.run_notes(res)
    labels, n = res.labels, len(res.labels)
    if n < 2:
        st.warning("A plane of queries and keys needs at least two tokens: type a longer text.", icon=":material/edit:")
        st.stop()
    ui.seed_from_url("qk_space", lambda raw: raw if raw in SPACES else None)  # a link may say shared or raw
    space = controls[2].selectbox("Queries and keys", list(SPACES), format_func=SPACES.get, key="qk_space", **ui.BOUND)
    threshold = controls[3].slider("Lines for weights ≥", 0.05, 1.0, 0.3, 0.05, key="qk_threshold", **ui.BOUND)
    settle_token("qk_row", labels, None, "highlighted query")
    take_click(n)
    row = controls[4].selectbox("Highlight the row of query", list(range(n)), key="qk_row", index=None,
                                placeholder="click a point, or pick", format_func=lambda i: f"{labels[i]} ({i})",
                                persist_state="session")
    token_drawn("qk_row", labels)
    keep_token_in_link("qk_row", row, labels)

    qk = head_queries_and_keys(model, res, layer, head)
    plane = plane_of(qk, space)
    weights = res.attentions[layer, head]  # (n, n) after softmax, at the mask and scale on screen
    pairs = strongest_pairs(weights, threshold)
    fig = qk_figure(plane, labels, pairs, weights, row, plane_title(qk, plane, layer, head),
                    font_px=16 if presenting() else 14, height=420 if presenting() else 520)
    left, right = st.columns([3, 2], gap="medium")
    with left, ui.figure("plane"):
        plotly_chart(st, fig, width="stretch", key=PLOT, on_select=lambda: take_click(n),
                        selection_mode="points", config={"displaylogo": False, "scrollZoom": False})
        st.caption(f"{lines_sentence(len(pairs), threshold)} Circles = queries, diamonds = keys; hover for token and "
                   "position; drag to pan, double-click to reset.")
    with right:
        if row is None:
            st.info("Click a query or key point (or pick a token above): its query's row of weights appears here, "
                    "and its lines turn red.", icon=":material/touch_app:")
        else:
            scaled = (qk.q @ qk.k.T) * res.scale  # q·k × s (n, n), the scores before the mask
            if res.mask is not None:
                scaled = scaled.masked_fill(~res.mask, float("-inf"))
            st.markdown(f"**Row of query {labels[row]} ({row})**, layer {layer} head {head}: largest weight first")
            ui.table(st, row_table(weights, scaled, plane, row, labels), hide_index=True, width="stretch",
                         height=table_height(n, most=16), key="qk_row_table",
                         column_config={"weight": st.column_config.NumberColumn(format="%.3f"),
                                        "q·k × s": st.column_config.NumberColumn(
                                            format="%.3f", help=f"the score q·k times s = {res.scale:.4g}, with the "
                                                                "mask's −∞ where it forbids the pair"),
                                        "distance in plane": st.column_config.NumberColumn(format="%.2f")})

    st.markdown(f"**What is on the plane.** {which_vectors(qk, model.n_heads)} {space_sentence(space)}")
    st.markdown(f"**What the plane keeps.** {plane_sentence(plane, qk)} "
                f"{agreement_sentence(plane, weights, res.mask, qk, res.scale)}")
    st.caption(f"{model.name} · layer {layer}, head {head} · {n} tokens · d_head = {model.d_head} · "
               f"{vectors_name(qk)} = {2 * n} points · mask `{view.mask_spec}` · scores × {res.scale:.4g}. The scale "
               "multiplies each q·k after it is computed, so it does not move layer 0's points; in later layers "
               "they move because the earlier layers' outputs change with it (and with the mask).")
ui.mark_drawn(view)
