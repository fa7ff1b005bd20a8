"""Multi-head anatomy: d_model cut into heads and glued back, Concat·W_O as a sum over heads, what each
head adds, and MHA vs MQA vs GQA (KV cache, K/V heads averaged into groups)."""

import streamlit as st

import ui
from attnviz.lessons.multihead import latex as tex
from attnviz.lessons.multihead.figures import kv_cache_figure
from attnviz.lessons.multihead.grouping import (
    BYTES_PER_VALUE,
    PUBLISHED,
    cache_note,
    format_bytes,
    grouped_patterns,
    kv_cache_bytes,
    kv_cache_rows,
    kv_sharing,
    model_geometry,
    n_kv_heads,
    sharing_in_trace,
)
from attnviz.lessons.multihead.heads import PAPER, head_split
from attnviz.lessons.multihead.projection import output_projection
from attnviz.lessons.step_by_step.figures import percentile_limit
from attnviz.lessons.step_by_step.steps import attention_input
from ui import heatmap_widget as hm
from ui.charts import plotly_chart
from ui.present import table_height

view = ui.open_page("Multi-head anatomy",
                    "How one layer's d_model features are cut into heads and put back together, what each head adds to "
                    "the output, and how MQA and GQA save memory by letting query heads share keys and values.",
                    waits_for_text="The heads appear", layer_heads="layer+heads")

with ui.guard("The multi-head anatomy page"):
    model, layer, heads = view.model, view.layer, list(view.heads)
    res = view.run(keep=True)
    ui.run_notes(res)
    labels, n = res.labels, len(res.labels)
    C, nh, hs = model.d_model, model.n_heads, model.d_head
    W = nh * hs  # Q's width: d_model in most models, set apart from it by a Llama-family config's head_dim
    numbers = hs <= 8 and n <= 16  # the toy model: numbers fit inside the cells
    st.markdown(f"**{model.name}** · layer {layer} · **n = {n} tokens** · d_model = {C} · {nh} heads · d_head = {hs}"
                + (f" · Q is {nh} × {hs} = {W} wide, not {C}" if W != C else ""))

    # ---- 1) the reshape ---------------------------------------------------------------------------
    st.header("1. Cutting d_model into heads")
    split = head_split(res, layer)
    st.latex(tex.both_splits(C, nh, hs, model.name))
    st.markdown("Each head does not get its own copy of the features: the projected matrix Q = X W_Q (one row per "
                "token, d_model columns) is **cut into column blocks**, one block of d_head columns per head. "
                "K and V are cut the same way. After attention the heads' outputs are glued back side by side."
                + (f" In {model.name} d_head = {hs} is set by its config, so W_Q maps d_model = {C} to "
                   f"{nh} · {hs} = {W} columns (not {C}), and W_O maps those {W} back to {C}." if W != C else "")
                + (" Here Q is the projection X W_Q before RoPE rotates it." if model.cfg.positions == "rope"
                   else ""))
    st.latex(tex.reshape_chain(n, C, nh, hs))
    cols = st.columns(2)
    with cols[0], ui.guard("The input X"):  # a family whose input norm this lesson does not know says so here
        x = attention_input(model, res.traces[layer], layer)
        clip = percentile_limit(x.numpy())
        hm.heatmap(x, labels, key="mha_x", kind="signed", x_title="feature", show_values=numbers, limit=clip,
                   title=f"X, the input ({n} × {C}), clip ±{clip:.3g}")
    with cols[1]:
        hm.heatmap(split.q, labels, key="mha_q", kind="signed", x_title="feature", show_values=numbers,
                   title=f"Q = X W_Q + b_Q ({n} × {W})")
    shown = heads[:12]
    st.markdown(f"**The same Q as ({nh}, {n}, {hs})**: head h holds columns {hs}·h to {hs}·h + {hs - 1}"
                + (f" (the first {len(shown)} of the chosen heads)" if len(heads) > len(shown) else "") + ".")
    limit = float(split.q.abs().max()) or 1.0  # one colour range for every slice, the same as Q's
    grid = st.columns(min(3, len(shown)))
    for i, h in enumerate(shown):
        with grid[i % len(grid)]:
            lo = h * hs
            hm.heatmap(split.per_head[h], labels, key=f"mha_slice_{h}", kind="signed", show_values=numbers,
                       x_title=f"column − {lo}", limit=limit, title=f"head {h} · Q columns {lo}–{lo + hs - 1}")
    st.latex(tex.round_trip(split.round_trip_gap))
    st.caption("Splitting and merging only moves numbers around: gluing the blocks back gives Q exactly (difference 0).")

    # ---- 2) Concat · W_O = Σ_h head_h · W_Oʰ ----------------------------------------------------
    st.header("2. Concat · W_O is a sum over heads")
    proj = output_projection(model, res, layer)
    st.markdown(f"W_O ({W} × {C}) has its rows in {nh} blocks of {hs}, one block W_Oʰ per head. Multiplying the "
                f"concatenated head outputs by W_O is therefore the same as letting every head project its own "
                f"output with its block and adding the {nh} results. Computed both ways on layer {layer}, "
                f"every token and every feature:")
    st.latex(tex.concat_equals_sum(nh, hs, C))
    st.latex(tex.projection_gap(nh, proj.gap))
    if proj.gap < 1e-4:
        st.caption("A difference this small is float32 rounding: the two ways agree. Adding b_O"
                   + (" (this model has none)" if model.layers[layer].b_o is None else "")
                   + f" gives the layer's own attention output to within {proj.trace_gap:.1e}.")
    else:
        st.warning(f"The two ways differ by {proj.gap:.2e}, more than float32 rounding explains.")

    # ---- 3) what each head adds -------------------------------------------------------------------
    st.header("3. What each head adds to the output")
    st.markdown("Because the output is a sum over heads, each head's term head_h · W_Oʰ is a vector it adds to every "
                "token's output. Its length (L2 norm) says how much that head changes that token: a dark row is a "
                "head that contributes a lot, a pale one a head that is nearly silent here.")
    norms = proj.contribution_norms  # (nh, T)
    hm.heatmap(norms, [f"head {h}" for h in range(nh)], labels, key="mha_contrib", kind="magnitude", bytes_per_cell=4,
               x_title="token",
               show_values=numbers, title=f"‖head_h·W_Oʰ‖₂ per head (row) and token (column), layer {layer}")
    loudest = int(norms.mean(dim=1).argmax())
    st.caption(f"Largest on average: head {loudest} (mean norm {float(norms[loudest].mean()):.3g}); "
               f"quietest: head {int(norms.mean(dim=1).argmin())} (mean norm {float(norms.mean(dim=1).min()):.3g}).")

    # ---- 4) MHA, MQA, GQA -------------------------------------------------------------------------
    st.header("4. MHA, MQA and GQA")
    n_kv = n_kv_heads(model)
    st.markdown("When a model generates text it keeps every past token's K and V (the **KV cache**) so it does not "
                "recompute them. **MHA** keeps one K/V head per query head; **MQA** keeps a single K/V head shared "
                "by all query heads; **GQA** keeps G K/V heads, each shared by a group of consecutive query heads.")
    if n_kv < nh:
        gqa = ui.figure("gqa")
        gqa.subheader(f"{model.name} really shares K/V heads: {nh} query heads, {n_kv} K/V heads")
        read, share_gap = sharing_in_trace(res, layer)
        ui.table(gqa, [{"K/V head": j, "query heads that read it": ", ".join(map(str, qs)),
                       "found in this run": ", ".join(str(h) for h in range(nh) if read[h] == j)}
                      for j, qs in enumerate(kv_sharing(nh, n_kv))], hide_index=True)
        gqa.caption(f"Query head h reads K/V head h // {nh // n_kv}. The last column is read off layer {layer}'s own "
                   f"run: each query head's K and V compared with the {n_kv} cached K/V heads (max difference "
                   f"{share_gap:.1e}: the very same numbers).")
    st.subheader("KV cache size")
    geos = {g.name: g for g in [model_geometry(model)] + PUBLISHED}
    c1, c2, c3 = st.columns(3)
    geo = geos[c1.selectbox("Model", list(geos), key="mha_geo", help="The loaded model or a published configuration.")]
    length = int(c2.number_input("Sequence length (tokens)", 1, 1_000_000, 4096, 256, key="mha_len", **ui.BOUND))
    dtype = c3.selectbox("Bytes per value", list(BYTES_PER_VALUE), index=1, key="mha_dtype", **ui.BOUND)
    bpv = BYTES_PER_VALUE[dtype]
    st.caption(f"{geo.name}: {geo.n_layers} layers, {geo.n_heads} query heads, {geo.n_kv_heads} K/V heads, "
               f"d_head {geo.d_head}; one sequence of {length} tokens in {dtype}.")
    if cache_note(geo):
        st.info(cache_note(geo), icon=":material/info:")
    st.latex(tex.kv_cache_formula(geo.n_layers, geo.n_kv_heads, geo.d_head, bpv, length,
                                  kv_cache_bytes(geo.n_layers, geo.n_kv_heads, geo.d_head, bpv, length), geo.decoder))
    rows = kv_cache_rows(geo, bpv, length)
    ui.table(st, [{"variant": r.variant, "K/V heads": r.n_kv_heads, "query heads per K/V head": r.query_heads_per_kv,
                   "KV cache": format_bytes(r.bytes), "of MHA": f"{r.fraction_of_mha:.1%}",
                   "trained with": "✓" if r.is_models_own else ""} for r in rows], hide_index=True)
    plotly_chart(st, kv_cache_figure(rows, f"{geo.name}{'' if geo.decoder else ' as if a decoder'}, {length} tokens, "
                                          f"{dtype} (dark = as trained)"),
                    width="stretch", key="mha_kv_chart")

    if n_kv == nh:
        st.subheader("What if this layer's K/V heads were shared?")
        st.warning(f"An approximation of a model that was not trained this way: {model.name} has its own K and V for "
                   f"every head. Here the K/V projection weights of the heads in each group are averaged, and every "
                   f"query head attends with its group's shared K/V. Only layer {layer} changes; its input is the "
                   f"original run's. A model trained with GQA learns weights that suit the sharing; this one did not.",
                   icon=":material/science:")
        g1, g2 = st.columns(2)
        groups = int(g1.number_input(f"K/V groups G (1 = MQA, {nh} = MHA)", 1, nh, max(1, nh // 4 if nh >= 4 else 1),
                                     1, key="mha_groups", **ui.BOUND))
        with ui.guard("The grouped patterns"):
            gp = grouped_patterns(model, res, layer, groups)
            head = g2.selectbox("Head to compare", heads, key="mha_head", **ui.BOUND)
            st.latex(tex.grouped_equation(nh, groups))
            ui.table(st, [{"query head": h, "K/V group": gp.group_of_head[h],
                           "max |Δ weight|": round(float(gp.max_abs_change[h]), 4),
                           "mean row total variation": round(float(gp.total_variation[h]), 4),
                           "mean row KL (nats)": round(float(gp.kl[h]), 4)} for h in range(nh)], hide_index=True,
                         height=table_height(nh))
            st.caption(f"Total variation ½ Σ_j |a_j − a′_j| is 0 for identical rows and 1 for rows with no overlap. "
                       f"The layer's attention output (V averaged too) changes by {gp.output_change:.1%} of its norm. "
                       f"With G = {nh} every head keeps its own K/V and nothing changes.")
            p1, p2 = st.columns(2)
            with p1:
                hm.heatmap(gp.original[head], labels, key="mha_orig", show_values=numbers,
                           title=f"original, head {head}")
            with p2:
                hm.heatmap(gp.grouped[head], labels, key="mha_grouped", show_values=numbers,
                           title=f"G = {groups} shared K/V groups, head {head}")
            with st.columns(2)[0]:
                hm.heatmap(gp.grouped[head] - gp.original[head], labels, labels, key="mha_delta", kind="signed",
                           show_values=numbers, x_title="key (attended to)", title=f"Δ = shared − original, head {head}")
    st.caption(f"The original paper: d_model {PAPER['d_model']}, h = {PAPER['n_heads']} heads of d_head "
               f"{PAPER['d_head']}, every head with its own K/V (MHA).")
ui.mark_drawn(view)
