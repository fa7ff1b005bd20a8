"""Model view: every layer × head at once, one head enlarged, head statistics and attention rollout."""

from functools import partial

import streamlit as st

import ui
from attnviz.analysis.rollout import attention_rollout
from attnviz.analysis.stats import head_statistics
from attnviz.lessons.model_view import (
    ROLLOUT_VALUE,
    STATISTICS,
    STATISTICS_SHORT,
    STATISTICS_TEXT,
    head_of_thumbnail,
    statistics_map,
    thumbnail_names,
    thumbnail_of,
    thumbnail_titles,
    thumbnails,
)
from ui import heatmap_widget as hm
from ui.memo import shared
from ui.present import table_height
from ui.runs import run_for


@shared(max_entries=16)
def _thumbnails(spec: str, device: str, text: str, mask_spec: str, scale):
    """Every head of the run pooled for the thumbnail grid: ((L·H, m, m) patterns, m labels, block b)."""
    res = run_for(spec, device, text, mask_spec, scale)
    return thumbnails(res.attentions, res.labels)


def take_click(n_layers: int, n_heads: int, cells: int) -> None:
    """A clicked thumbnail (the grid's state, as the browser or a test wrote it) becomes the enlarged head.

    Runs as the grid's on_select (before the rerun) and again before the pickers are drawn (AppTest writes
    the state without callbacks). The grid keeps its last click in its state and the browser sends it with
    every rerun, so a click is taken once: otherwise it would undo each later choice in the pickers. (The
    browser stamps each thumbnail click with its time, so the same thumbnail clicked again is a new click.)"""
    raw = (st.session_state.get("mv_grid") or {}).get("selection")
    if raw is None or raw == st.session_state.get("_mv_taken_click"):
        return
    st.session_state["_mv_taken_click"] = raw
    click = hm.clean_selection(raw, n_layers * n_heads, cells, cells)
    if click is not None:  # garbage, or a panel this model does not have: nothing changes
        st.session_state["mv_layer"], st.session_state["mv_head"] = head_of_thumbnail(click["panel"], n_heads)


@shared(max_entries=16)
def _statistics_and_rollout(spec: str, device: str, text: str, mask_spec: str, scale):
    res = run_for(spec, device, text, mask_spec, scale)
    return head_statistics(res.attentions, res.tokens), attention_rollout(res.attentions)


view = ui.open_page("Model view: every head of every layer",
                    "One small heatmap per head: rows = layers (L0 is closest to the input), columns = heads. Each "
                    "thumbnail is that head's attention pattern, query rows looking at key columns, on the same 0..1 "
                    "colour scale. Click a thumbnail to enlarge that head below.",
                    waits_for_text="The model view appears")

with ui.guard("The model view"):
    model, res = view.model, view.run()
    ui.run_notes(res)
    n = len(res.tokens)
    run_key = (view.model_spec, view.device, view.text, view.mask_spec, view.scale)
    # everything the page shows is computed before any of it is sent: the browser then lays the page out once,
    # not once for the top and again for each part that follows a computation
    pooled, pooled_labels, block = _thumbnails(*run_key)
    stats, rollout = _statistics_and_rollout(*run_key)
    st.markdown(f"**{model.name}** · {model.n_layers} layers × {model.n_heads} heads = "
                f"{model.n_layers * model.n_heads} patterns · **{n} tokens**")

    cells = pooled.shape[-1]
    take_click(model.n_layers, model.n_heads, cells)  # a click AppTest wrote (in a browser, on_select took it)
    grid_slot = st.container()  # the grid goes above the pickers, but its frame needs their values
    st.subheader("One head in full detail")
    pick = st.columns([1, 1, 3])
    layer = pick[0].selectbox("Layer", list(range(model.n_layers)), key="mv_layer", **ui.BOUND)
    head = pick[1].selectbox("Head", list(range(model.n_heads)), key="mv_head", **ui.BOUND)
    pick[2].caption("The enlarged head is framed in the grid above: click another thumbnail, or pick it here. "
                    "Hover or tap a cell for the query, key and weight.")
    hm.heatmap(res.attentions[layer, head], res.labels, key="mv_focus",
               title=f"layer {layer}, head {head}: weights after softmax")

    with grid_slot:
        hm.heatmap_grid(pooled, pooled_labels, key="mv_grid", titles=thumbnail_titles(model.n_layers, model.n_heads),
                        columns=model.n_heads, thumbnails=True, selectable=True,
                        highlight=thumbnail_of(layer, head, model.n_heads),
                        panel_names=thumbnail_names(model.n_layers, model.n_heads),
                        label=f"every layer × head: {model.n_layers} × {model.n_heads} thumbnails",
                        on_select=partial(take_click, model.n_layers, model.n_heads, cells))
        if block > 1:
            st.info(f"Thumbnails: with {n} tokens each cell averages a {block}×{block} block of tokens (the weight an "
                    "average query of the block gives to the keys of the block, so rows still sum to 1). "
                    "The enlarged head below shows every token.", icon=":material/zoom_in:")

    st.subheader("What each head does, in numbers")
    st.markdown(STATISTICS_TEXT)
    statistic = st.selectbox("Statistic to map", list(STATISTICS), format_func=STATISTICS.get, key="mv_stat",
                             **ui.BOUND)
    st.html(statistics_map(stats, statistic))
    ui.table(st, stats, hide_index=True, width="stretch", height=table_height(len(stats), most=10),
                  column_config={name: st.column_config.NumberColumn(STATISTICS_SHORT[name], help=label, format="%.3f")
                                for name, label in STATISTICS.items()})

    st.subheader("Attention rollout: what reaches each position from the input")
    st.markdown("One layer's pattern mixes the previous layer's vectors, which are already mixtures. Rollout chains "
                "the layers together (heads averaged, plus the residual path as half of each row) to estimate how "
                "much of each input token has reached each position. It is a rough picture: it ignores the values, "
                "the feed-forward layers and the layer norms.")
    st.latex(r"\hat A_l = \mathrm{rownorm}\!\left(\tfrac12\,\overline{A_l} + \tfrac12 I\right),\qquad "
             r"R_l = \hat A_l\,R_{l-1},\quad R_0 = \hat A_0")
    last = model.n_layers - 1
    upto = last
    if model.n_layers > 1:
        upto = st.select_slider(f"Rollout after layer (layer {last} = the whole model)", list(range(model.n_layers)),
                                value=last, key="mv_rollout_layer", **ui.BOUND)
    title = f"rollout after layer {upto}" + (" (the whole model)" if upto == last else "")
    hm.heatmap(rollout[upto], res.labels, key="mv_rollout", title=title, value_name=ROLLOUT_VALUE,
               x_title="input token (key position)")
ui.mark_drawn(view)
