"""Model view: every layer × head at once, one head enlarged, head statistics and attention rollout."""

import streamlit as st

from pages import _ui as ui
from pages._heatmap import heatmap


@st.cache_data(show_spinner=False, max_entries=16)
def _grid(spec: str, device: str, text: str, mask_spec: str, scale, highlight: tuple[int, int]):
    """The thumbnail mosaic as ONE plotly figure (72 traces on one pair of axes).

    The one exception to "every matrix through pages/_heatmap": heatmap_grid's plotly body draws each
    panel as its own chart with tick labels, which at 12 columns leaves ~50 px panels with no room for
    the pattern. Once heatmap_grid has a compact thumbnail mode (the canvas component), this becomes
        pooled, labels, block = thumbnails(res.attentions, res.labels)  # attnviz.lessons.model_view
        heatmap_grid(pooled, labels, key="mv_grid", titles=thumbnail_titles(L, H, (layer, head)), columns=H)
    """
    from attnviz.lessons.model_view import model_view_figure

    res = ui.cached_run(spec, device, text, mask_spec, scale)
    return model_view_figure(res.attentions, res.labels, highlight=highlight)


@st.cache_data(show_spinner=False, max_entries=16)
def _statistics_and_rollout(spec: str, device: str, text: str, mask_spec: str, scale):
    from attnviz.analysis.rollout import attention_rollout
    from attnviz.analysis.stats import head_statistics

    res = ui.cached_run(spec, device, text, mask_spec, scale)
    return head_statistics(res.attentions, res.tokens), attention_rollout(res.attentions)


settings = ui.page_settings()
st.title("Model view: every head of every layer")
st.caption("One small heatmap per head: rows = layers (L0 is closest to the input), columns = heads. Each thumbnail "
           "is that head's attention pattern, query rows looking at key columns, on the same 0..1 colour scale.")

with ui.guard("The model view"):
    from attnviz.lessons.model_view import STATISTICS, STATISTICS_SHORT, statistics_figure

    model, spec = ui.load_model_or_fallback(settings)
    res, mask_spec = ui.page_run(model, spec, settings, "The model view appears")
    n = len(res.tokens)
    st.markdown(f"**{model.name}** · {model.n_layers} layers × {model.n_heads} heads = "
                f"{model.n_layers * model.n_heads} patterns · **{n} tokens**")
    run_key = (spec, settings.device, settings.text, mask_spec, settings.scale)

    grid_slot = st.container()  # the grid goes above the pickers, but its frame needs their values
    st.subheader("One head in full detail")
    pick = st.columns([1, 1, 3])
    layer = pick[0].selectbox("Layer", list(range(model.n_layers)), key="mv_layer", **ui.BOUND)
    head = pick[1].selectbox("Head", list(range(model.n_heads)), key="mv_head", **ui.BOUND)
    pick[2].caption("The enlarged head is framed in the grid above. Hover a cell for the query, key and weight.")
    heatmap(res.attentions[layer, head], res.labels, key="mv_focus", title=f"layer {layer}, head {head}: weights after softmax")

    with grid_slot:
        fig, block = _grid(*run_key, highlight=(layer, head))
        st.plotly_chart(fig, width="stretch", key="mv_grid")
        if block > 1:
            st.info(f"Thumbnails: with {n} tokens each cell averages a {block}×{block} block of tokens (the weight an "
                    "average query of the block gives to the keys of the block, so rows still sum to 1). "
                    "The enlarged head below shows every token.", icon=":material/zoom_in:")

    stats, rollout = _statistics_and_rollout(*run_key)
    st.subheader("What each head does, in numbers")
    st.markdown("Entropy says how spread out a head's rows are; mean distance how far it looks; the shares say how much "
                "weight goes to the sink tokens ([CLS], [SEP] or the first token), to the token itself and to the "
                "token just before. Heads that park their weight on a sink often have nothing useful to add.")
    statistic = st.selectbox("Statistic to map", list(STATISTICS), format_func=STATISTICS.get, key="mv_stat",
                             **ui.BOUND)
    st.plotly_chart(statistics_figure(stats, statistic), width="stretch", key="mv_stats")
    st.dataframe(stats, hide_index=True, width="stretch", height=min(400, 35 * len(stats) + 38),
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
    heatmap(rollout[upto], res.labels, key="mv_rollout", title=title)
