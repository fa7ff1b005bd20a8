"""Attention as a layer: from one captioning query over the regions of a picture to self-attention, one change per step.

URL keys (a lecture plan links to each step, e.g. /attention_layer?al_step=c):
    al_step      a (one query) | b (many queries) | c (keys and values) | d (self-attention); default a
    al_grid      the grid, rows x columns, e.g. 6x8 (1 to 12 rows, 1 to 16 columns); default 6x8
    al_query     sun | sky | grass | water | house | custom; default sun
    al_qvec      the custom query over the region features (steps a, b): 5 numbers, comma-separated
    al_kvec      the custom query over the key features (step c): 4 numbers, comma-separated
    al_strength  the query strength s (0 to 30): q = s × the preset's vector, and W_Q = s × W_K in d; default 10
    al_seed      the seed of the shuffle in d; default 0
"""

import pandas as pd
import streamlit as st

import ui
from attnviz.lessons.attention_layer import figures as fg
from attnviz.lessons.attention_layer import latex as lx
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import FEATURE_MEANINGS, FEATURES, parse_grid, picture_png, picture_regions
from attnviz.lessons.attention_layer.upward import upward_pull, upward_sentence
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap, heatmap_bytes, heatmap_row
from ui.memo import shared

STEPS = {"a": "a · one query", "b": "b · many queries", "c": "c · keys and values", "d": "d · self-attention"}


@shared(max_entries=16)
def _regions(rows: int, cols: int):
    return picture_regions(rows, cols)


def _weights_and_pictures(weights, names: list[str], regions, png, map_key: str, pictures_key: str, title: str):
    """M queries' weights over the regions: as a heatmap (M × N), then over the picture, one picture per query."""
    heatmap(weights, names, regions.labels, key=map_key, x_title="region", title=title)
    plotly_chart(ui.figure("pictures"), fg.pictures_with_weights(png, regions, weights, names), width="stretch", key=pictures_key)
    st.caption("Each picture on its own scale: its clearest region has that query's largest weight (the max in "
               "its title); the darker a region, the less weight. Hover or tap a region for its weight.")


view = ui.open_page("Attention as a layer",
                    "In image captioning with attention, a decoder writing a sentence about a picture weighs the "
                    "picture's regions afresh at every word. Take away the captioning and what is left is a layer: "
                    "a query, a set of vectors, weights, a weighted sum. Four steps, one change each, turn it into "
                    "self-attention.",
                    settings=())  # no language model here: on a projector the first screen is the picture

with ui.guard("The attention layer"):
    # a link's value a widget cannot take is dropped by Streamlit without a word: say what was asked and what is shown
    for key, allowed, shown in (("al_step", list(STEPS), "step a"), ("al_query", [*qs.PRESETS, qs.CUSTOM], "sun")):
        raw = st.query_params.get(key)
        if raw is not None and raw not in allowed and key not in st.session_state:
            st.warning(f"The link asks for {key}={raw}, which is not one of {', '.join(allowed)}: showing {shown}.",
                       icon=":material/link_off:")

    # The step is kept in the URL by hand, not by bind=: a bound widget writes its formatted label into the link
    # ("b · many queries"), and lecture plans link to al_step=b.
    ui.page.seed_choice_from_url("al_step", list(STEPS), "a")
    step = st.segmented_control("Step", list(STEPS), format_func=STEPS.get, key="al_step", required=True,
                                label_visibility="collapsed")
    ui.page.keep_in_link("al_step", step)
    top = st.columns([1.2, 1.5, 1.6, 2.1], vertical_alignment="bottom")  # "Own query" whole at 1024 px, projected
    grid_text = top[0].text_input("Grid: rows x cols", "6x8", key="al_grid", **ui.BOUND,
                                  help="1 to 12 rows and 1 to 16 columns, written like 6x8")
    if step in ("b", "c"):  # every preset is a row already: the one choice left is a row of one's own
        asked = st.session_state.get("al_query", st.query_params.get("al_query"))
        query = qs.CUSTOM if top[1].toggle("Own query", value=asked == qs.CUSTOM, key="al_add_custom",
                                           help="Add a query of your own numbers as one more row") else (asked or "sun")
    elif step == "d":  # the regions make their own queries: no picker that would do nothing
        query = st.session_state.get("al_query", st.query_params.get("al_query")) or "sun"
    else:
        query = top[1].selectbox("Query", [*qs.PRESETS, qs.CUSTOM], key="al_query",
                                 **ui.BOUND, help="Written by hand. In a captioning model the decoder's hidden state "
                                                  "makes the query. " + "; ".join(f"{p.name}: looks for {p.asks}"
                                                                                for p in qs.PRESETS.values()))
    strength = top[2].slider("Query strength s", 0.0, 30.0, 10.0, 0.5, key="al_strength", **ui.BOUND,
                             help="q = s × the preset's vector (in step d, W_Q = s × W_K without its brightness column): a "
                                  "longer query spreads the "
                                  "scores further apart, so the softmax picks more sharply.")
    custom = ""
    if query == qs.CUSTOM and step != "d":
        # over the region features in a and b, over the key features in c: two boxes, each with its own URL key
        names, key, example = ((qs.KEY_FEATURES, "al_kvec", "1, 0, 1, 1") if step == "c"
                               else (FEATURES, "al_qvec", "1, 1, -2, 1, 0"))
        custom = top[3].text_input(f"Custom query: {len(names)} numbers ({', '.join(names)}), then × s",
                               example, key=key, **ui.BOUND)

with ui.guard("The attention layer"):
    rows, cols = parse_grid(grid_text)
    regions = _regions(rows, cols)
    png = picture_png()
    n, d = regions.n, len(FEATURES)
    features_note = ("Region features (D = 5): " + "; ".join(f"**{k}** = {v}" for k, v in FEATURE_MEANINGS.items())
                     + ". Computed from the picture by attnviz; a captioning model would use a CNN's features instead.")

    if step == "a":
        q = qs.feature_query(query, strength, custom)  # (D,)
        one = ly.one_query(regions.x, q)
        name = f"{query}: {qs.PRESETS[query].asks}" if query in qs.PRESETS else "custom"
        left, right = st.columns([3, 2])
        plotly_chart(ui.figure("picture", where=left), fg.picture_with_weights(png, regions, one.weights[0].numpy(),
                                                  f"weights a_j of the query '{name}'<br>over the {rows} × {cols} regions"),
                          width="stretch", key="al_picture")
        left.caption(f"The clearest region has the largest weight ({float(one.weights.max()):.3f}); the darker a region, "
                     "the less weight; weight 0 would be 75 % dark. Hover or tap a region for its weight.")
        with right:
            for line in lx.one_query_latex(rows, cols, d):  # short lines: they sit beside the picture
                st.latex(line)
            table = pd.DataFrame({"query q": q.numpy(), "context y": one.outputs[0].numpy()}, index=list(FEATURES))
            ui.table(st, table, key="al_vectors", width="stretch", column_config={
                c: st.column_config.NumberColumn(format="%.3f") for c in table.columns})
            st.html(fg.swatches_html(["the colour y averages to"], [one.outputs[0, :3].numpy()]))
        st.markdown(f"The query is a vector in the same space as the regions, **written by hand** here (s = {strength:g} "
                    "× the preset); in a captioning model the decoder's hidden state makes it at every word. Each "
                    "region gets a score, here the dot product with the query scaled by 1/√D. (The captioning model "
                    "of the course's source scores each region with f_att(h, z_j), a small neural network, an MLP: "
                    "additive attention; the general layer swaps it for the scaled dot product, as the Transformer "
                    "does. The page Additive vs dot-product compares the two.) The softmax turns the "
                    f"{n} scores into weights that sum to 1; the context vector y is the weighted average of the "
                    "region vectors, so its colour is the average colour of where the query looked.")
        st.caption(features_note)

    elif step == "b":
        queries = qs.all_feature_queries(strength)  # (M, D)
        names = list(qs.PRESETS)
        if query == qs.CUSTOM:  # the custom query joins the presets as one more row
            queries, names = qs.with_query(queries, qs.feature_query(query, strength, custom)), [*names, "custom"]
        many = ly.many_queries(regions.x, queries)
        m = len(names)
        for line in lx.many_queries_latex(rows, cols, d, m):
            st.latex(line)
        _weights_and_pictures(many.weights.numpy(), names, regions, png, "al_many_map", "al_pictures",
                              f"weights A ({m} queries × {n} regions), each row sums to 1")
        outputs = pd.DataFrame(many.outputs.numpy(), index=names, columns=list(FEATURES))
        st.markdown(f"**Y = A X** ({m} × {d}): each query's output, the weighted average of the regions' vectors")
        ui.table(st, outputs, key="al_outputs", width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in outputs.columns})
        st.html(fg.swatches_html(names, many.outputs[:, :3].numpy()))
        st.markdown(f"One query per row: the {m} queries (s = {strength:g}) go through the same scores, softmax and "
                    f"weighted sum at once, as one matrix product Q Xᵀ. A captioning decoder asks one query per "
                    "word, one after the other; a layer can ask many together. Each output row Y_i is the context "
                    "vector of query i.")
        st.caption(features_note)

    elif step == "c":
        queries = qs.all_key_queries(strength)  # (M, D_k)
        names = list(qs.PRESETS)
        if query == qs.CUSTOM:
            queries, names = qs.with_query(queries, qs.key_query(query, strength, custom)), [*names, "custom"]
        kv = ly.keys_and_values(regions.x, queries)
        m, d_k, d_v = len(names), ly.W_K.shape[1], ly.W_V.shape[1]
        for line in lx.keys_values_latex(rows, cols, d, m, d_k, d_v):
            st.latex(line)
        _weights_and_pictures(kv.weights.numpy(), names, regions, png, "al_kv_map", "al_kv_pictures",
                              f"weights A = softmax(Q Kᵀ/√{d_k}) ({m} × {n})")
        # the weights first (on a projector's first screen), then the hand-made matrices that made them
        left, right = st.columns(2)
        wk = pd.DataFrame(ly.W_K.numpy(), index=list(FEATURES), columns=list(qs.KEY_FEATURES))
        wv = pd.DataFrame(ly.W_V.numpy(), index=list(FEATURES), columns=list(ly.VALUE_FEATURES))
        left.markdown(f"**W_K** (D × D_k = {d} × {d_k}), written by hand: keys describe a region for matching")
        ui.table(left, wk, key="al_wk", width="stretch",
                       column_config={c: st.column_config.NumberColumn(format="%.3f") for c in wk.columns})
        right.markdown(f"**W_V** (D × D_v = {d} × {d_v}), written by hand: values keep only the colour")
        ui.table(right, wv, key="al_wv", width="stretch",
                        column_config={c: st.column_config.NumberColumn(format="%.0f") for c in wv.columns})
        st.caption("Key features: " + "; ".join(f"**{k}** = {v}" for k, v in qs.KEY_MEANINGS.items())
                   + ". In a trained model W_K and W_V are learned; these are chosen by hand so each column means "
                   "something.")
        outputs = pd.DataFrame(kv.outputs.numpy(), index=names, columns=list(ly.VALUE_FEATURES))
        st.markdown(f"**Y = A V** ({m} × {d_v}): each query's output, the weighted average of the regions' values")
        ui.table(st, outputs, key="al_kv_outputs", width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in outputs.columns})
        st.html(fg.swatches_html(names, kv.outputs.numpy()))
        st.markdown(f"The regions now play two parts. Their **keys** (N × D_k = {n} × {d_k}) are what a query is "
                    "compared with; their **values** (N × D_v = "
                    f"{n} × {d_v}) are what comes back. The queries are written over the key features (s = "
                    f"{strength:g}), so they are {d_k} numbers long, and each output is a value average: "
                    "a colour, D_v = 3 numbers.")

    else:
        w_q = ly.query_weights(strength)
        seed = int(top[3].number_input("Shuffle seed (the permutation P)", 0, 9999, 0, key="al_seed", **ui.BOUND))
        check = ly.permutation_check(regions.x, w_q, seed)
        d_k, d_v = ly.W_K.shape[1], ly.W_V.shape[1]
        for line in lx.self_attention_latex(rows, cols, d, d_k, d_v):
            st.latex(line)
        shuffled_labels = [regions.labels[i] for i in check.order.tolist()]
        # soft weights (a region spreads its weight over many like it): colours from 0 to the largest weight
        heatmap_row("al_self_row", [
            heatmap_bytes(check.attended.weights.numpy(), regions.labels, key="al_self_map", per_head_scale=True,
                          title=f"self-attention weights A(X) ({n} × {n})", x_title="region (key)"),
            heatmap_bytes(check.attended_shuffled.weights.numpy(), shuffled_labels, key="al_shuffled_map",
                          per_head_scale=True, title="A(P X): the same regions, shuffled", x_title="region (key)")])
        st.caption(f"Colours run from 0 to the largest weight, {float(check.attended.weights.max()):.3f} (uniform "
                   f"would be 1/{n} = {1 / n:.3f}); the shuffled map has the same weights, moved. Hover or tap for values.")
        colours = regions.x[:, :3].numpy()
        out, out_shuffled = check.attended.outputs.numpy(), check.attended_shuffled.outputs.numpy()
        order = check.order.numpy()
        plotly_chart(st, fg.mosaics([
            ("X: each region's colour", fg.colours_as_pixels(colours, rows, cols)),
            ("f(X): the outputs", fg.colours_as_pixels(out, rows, cols)),
            ("P X: regions shuffled", fg.colours_as_pixels(colours[order], rows, cols)),
            ("f(P X) = P f(X)", fg.colours_as_pixels(out_shuffled, rows, cols))]), width="stretch", key="al_mosaics")
        metric = st.columns(2)
        metric[0].metric("max |f(P X) − P f(X)|, outputs", f"{check.output_difference:.1e}")
        metric[1].metric("max |A(P X) − P A(X) Pᵀ|, weights", f"{check.weight_difference:.1e}")
        st.markdown(f"No query comes from outside: each region makes its own, Q = X W_Q, with W_Q = s × W_K "
                    f"without its brightness column (s = {strength:g}, by hand), so each region's query holds its own "
                    "warmth, green-ness and height, and its scores compare them with every region's key. "
                    + upward_sentence(upward_pull(regions, check.attended.weights, check.attended.outputs))
                    + f" N = {n} vectors in, N = {n} vectors "
                    f"out. Shuffle the regions (P, seed {seed}) and run the layer again: every output moves with its "
                    "region and nothing else changes, measured above in float64. The layer itself treats its input "
                    "as a set: it knows where a region sits only through the position features inside the region's "
                    "vector (here its height; W_K and W_V drop 'across'), and those move with the region.")
        st.caption("Each output's colour is the weighted average of the colours its region attended to (W_V keeps "
                   "the colour). The height feature goes into the keys through W_K; 'across' is dropped by W_K and "
                   "W_V in this hand-made layer.")
ui.mark_drawn(view)
