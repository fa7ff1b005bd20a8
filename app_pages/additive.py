"""Additive (Bahdanau) vs scaled dot-product attention: the two scorings on the same queries and keys, and their cost."""

import numpy as np
import streamlit as st
import torch

import ui
from attnviz.engine.masks import causal_mask
from attnviz.errors import AttnvizError
from attnviz.lessons.additive import figures as af
from attnviz.lessons.additive import scoring as sc
from attnviz.lessons.additive.cost import MAX_COST_N, WHY_DOT_PRODUCT_WON, cost_sentence, measure_cost
from attnviz.lessons.additive.scoring import fit_additive_to_dot_product
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared


@shared(max_entries=16)
def _fit(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, d_a: int, steps: int, seed: int):

    m = None if mask is None else torch.from_numpy(mask)
    return fit_additive_to_dot_product(torch.from_numpy(q), torch.from_numpy(k), d_a, steps, seed=seed, mask=m)


@shared(max_entries=4)
def _cost(d: int, d_a: int):
    return measure_cost(d=d, d_a=d_a)


view = ui.open_page("Additive vs dot-product attention",
                    "Before the Transformer, attention scored each query–key pair with a small neural network (Bahdanau "
                    "et al., 2015). The Transformer replaced it with a scaled dot product. Here both score the same "
                    "queries and keys.", settings=("text", "model", "mask"))  # both scorings at their own scale

with ui.guard("The comparison"):
    st.markdown("**Additive** scoring feeds each (query, key) pair through a one-hidden-layer network W, U, v; "
                "**dot-product** scoring multiplies them. Either way a softmax over the keys turns scores into "
                "weights, and the output is the weighted sum of the values:")
    st.latex(af.softmax_latex())

    top = st.columns(3)
    # options are short names: a bound widget puts the option's text in the URL
    source = top[0].radio("Queries and keys", ["random", "model"], key="add_source", horizontal=True,
                          captions=["seeded, N(0, 1)", "the model's, for the text"], **ui.BOUND)
    how = top[1].radio("Additive weights W, U, v", ["fixed", "fitted"], key="add_how", horizontal=True,
                       captions=["seeded", "learned to agree"], **ui.BOUND,
                       help="fixed: drawn at random from the seed. learned to agree: Adam steps that make the additive "
                            "pattern imitate the dot-product one.")
    seed = int(top[2].number_input("Seed", 0, 10_000, 0, key="add_seed", **ui.BOUND))
    row = st.columns(4)
    d_a = int(row[0].slider("d_a (additive hidden width)", 2, 128, 16, key="add_da", **ui.BOUND))
    steps = int(row[1].slider("Adam steps", 50, 1000, 300, step=50, key="add_steps", disabled=how != "fitted",
                              **ui.BOUND))
    mask = None
    if source == "random":
        n = int(row[2].slider("n (tokens)", 2, sc.MAX_N, 8, key="add_n", **ui.BOUND))
        d = int(row[3].slider("d (query/key width)", 2, 128, 16, key="add_d", **ui.BOUND))
        causal = st.toggle("causal mask (each query sees itself and the keys before it)", key="add_causal", **ui.BOUND)
        q, k, v = sc.random_qkv(n, d, seed)
        labels = [f"t{i}" for i in range(n)]
        if causal:
            mask = causal_mask(n)
        where = f"Q, K, V: {n} × {d}, entries from N(0, 1), seed {seed}"
    else:
        view, head = ui.page.layer_and_head("add_head", "The comparison appears", where=row[2:4])
        model, layer = view.model, view.layer
        res = view.run(keep=True, scale=True)
        ui.run_notes(res)
        if len(res.tokens) > sc.MAX_N:
            raise AttnvizError(f"The text has {len(res.tokens)} tokens; this comparison takes at most {sc.MAX_N}. "
                               "Shorten the text.")
        q, k, v = sc.head_queries_keys(res, layer, head)
        mask = res.mask
        labels = res.labels
        n, d = q.shape
        where = (f"Q, K, V: {model.name}'s layer {layer} head {head} projections of the text ({n} tokens × d_head {d})"
                 + (f"; {ui.setting_place('mask', 'mask')} applied to both" if mask is not None else ""))
    st.caption(where + ".")

    if how == "fitted":
        np_mask = None if mask is None else mask.reshape(n, n).numpy()
        with st.spinner(f"Fitting the additive weights ({steps} Adam steps)…"):
            fit = _fit(q.numpy(), k.numpy(), np_mask, d_a, steps, seed)
        weights = fit.weights
    else:
        fit, weights = None, sc.seeded_additive_weights(d, d, d_a, seed)
    both = sc.compare_scorings(q, k, v, weights, None if mask is None else mask.reshape(n, n))
    a_add, a_dot, diff = both.additive_weights, both.dot_weights, both.difference  # each (n, n)

    st.latex(af.additive_latex(d, d_a))  # one line each: side by side they shrank to a footnote at 1024 px
    st.latex(af.dot_latex(d))
    i, j = 0, min(1, n - 1)
    st.latex(af.entry_latex(i, j, float(both.additive_scores[i, j]), float(both.dot_scores[i, j]),
                            float(a_add[i, j]), float(a_dot[i, j])))
    values = n <= 6  # numbers in the cells only while half a 1024-pixel screen still fits them
    left, right = st.columns(2)
    with left:
        heatmap(a_dot, labels, key="add_dot_map", title="dot-product: weights after softmax", show_values=values)
    with right:
        short = "fitted" if fit is not None else "fixed"
        heatmap(a_add, labels, key="add_add_map", title=f"additive ({short}): weights after softmax", show_values=values)
        st.caption(f"Additive weights W, U, v: {weights.how}; hidden width d_a = {d_a}.")
    left, right = st.columns(2)
    with left:
        heatmap(diff, labels, labels, key="add_diff_map", kind="magnitude", bytes_per_cell=4, limit=1.0, show_values=values,
                title="|additive − dot-product| weights")
    m = right.columns(2)
    m[0].metric("max |Δ| weight", f"{float(diff.max()):.2e}")
    m[1].metric("mean |Δ| weight", f"{float(diff.mean()):.2e}")
    if fit is not None:
        m[0].metric("fit loss before", f"{fit.losses[0]:.3g}", help="KL(dot ‖ additive), mean over query rows")
        m[1].metric("fit loss after", f"{fit.losses[-1]:.3g}", help=f"after {steps} Adam steps, lr 0.05")
        plotly_chart(right, af.loss_figure(fit.losses), width="stretch", key="add_loss")
        right.caption("Learned to agree: the additive network was trained on these very queries and keys to copy the "
                      "dot-product pattern. A small network can imitate it closely; it just takes more work per pair. "
                      f"Loss: KL(dot ‖ additive), the mean over query rows; values under {af.LOSS_FLOOR:g} are float "
                      "rounding and drawn at that floor.")
    else:
        right.caption("Fixed weights: W, U and v are random, so the additive pattern has no reason to agree with the "
                      "dot-product one. Switch to 'learned to agree' to train them to.")

st.header("What each costs as n grows")
with ui.guard("The cost measurement"):
    c = st.columns(2)
    cost_d = int(c[0].select_slider("d for the measurement", [16, 32, 64, 128], 64, key="add_cost_d", **ui.BOUND))
    cost_da = int(c[1].select_slider("d_a for the measurement", [16, 32, 64, 128], 64, key="add_cost_da", **ui.BOUND))
    with st.spinner("Timing both scorings (first time only)…"):
        cost = _cost(cost_d, cost_da)
    plotly_chart(st, af.cost_figure(cost), width="stretch", key="add_cost")
    last = -1
    st.markdown(
        f"At n = {cost.ns[last]}: additive took **{af.duration_text(cost.additive_seconds[last])}** and built a "
        f"({cost.ns[last]}, {cost.ns[last]}, {cost.d_a}) tensor of **{cost.additive_bytes[last] / 2**20:.3g} MiB**; "
        f"dot-product took **{af.duration_text(cost.dot_seconds[last])}** with an ({cost.ns[last]}, {cost.ns[last]}) "
        f"matrix of **{cost.dot_bytes[last] / 2**20:.3g} MiB**.")
    st.caption(f"Measured in this page's process on one CPU thread of the machine serving the app (the fastest of 5 runs, "
               f"cached until the app restarts). n stops at {MAX_COST_N}: beyond it the additive tensor gets large for "
               f"a shared classroom server. {cost_sentence(cost.d, cost.d_a)} On a busy machine the time curves can "
               "wobble (other programs share the CPU); the memory chart is exact.")

st.header("Why dot-product won")
with ui.guard("Why dot-product won"):
    st.markdown(WHY_DOT_PRODUCT_WON)
ui.mark_drawn(view)
