"""Scaling lab: why attention divides its scores by √d_k, first with random vectors, then on the real model."""

import streamlit as st

import ui
from attnviz.lessons.scaling import figures as sf
from attnviz.lessons.scaling.experiments import (
    VARIANCE_SAMPLES,
    dot_product_variance_experiment,
    entropy_per_layer,
    gradient_experiment,
    softmax_saturation,
)
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared


@shared(max_entries=2)
def _experiments(d_ks: tuple[int, ...]):
    return dot_product_variance_experiment(d_ks), softmax_saturation(d_ks), gradient_experiment(d_ks)


view = ui.open_page("Scaling lab: why divide by √d_k?",
                    "Attention scores are dot products q·k. This page shows, with random vectors and then with the real "
                    "model, what happens to them, to the softmax and to its gradient when d_k grows, and what 1/√d_k "
                    "fixes.", settings=("text", "model", "mask"),  # its own scale factors, not the shared one
                    # a lecture's question here is about parts 1-3's random vectors at the slider's d_k, not the
                    # sentence (part 4's): the question says what is measured
                    subject=ui.Subject("What is measured", "scale_dk", "64", says=(
                        f"q · k, the unscaled dot product, over {VARIANCE_SAMPLES:,} random pairs q, k of d_k = {{}} "
                        "entries, each entry drawn from N(0, 1)")))

with ui.guard("The scaling lab"):
    with st.spinner("Drawing random vectors (first time only)…"):
        variance, saturation, gradient = _experiments(sf.D_K_GRID)
    d_k = st.select_slider("d_k, the number of entries (dimension) of each query and key", sf.D_K_GRID, value=64, key="scale_dk",
                           help="Every chart in parts 1–3 rings this d_k.", **ui.BOUND)
    i = list(sf.D_K_GRID).index(d_k)

    st.header("1 · Dot products grow with d_k")
    st.markdown("Draw q and k with every entry from N(0, 1). Their dot product adds d_k random terms, so its spread "
                "keeps growing as the vectors get longer. Dividing by √d_k shrinks it back to variance 1 for any d_k.")
    st.latex(sf.variance_latex(d_k, float(variance.unscaled_variance[i]), float(variance.scaled_variance[i])))
    metrics = st.columns(4)
    metrics[0].metric("d_k", d_k)
    metrics[1].metric("Var(q·k)", f"{variance.unscaled_variance[i]:.2f}", help=f"measured; theory: d_k = {d_k}")
    metrics[2].metric("Var(q·k/√d_k)", f"{variance.scaled_variance[i]:.3f}", help="measured; theory: 1")
    metrics[3].metric("typical q·k", f"±{variance.unscaled_variance[i] ** 0.5:.1f}",
                      help="one standard deviation of the unscaled score, √Var(q·k)")
    left, right = ui.figure("dot_products").columns(2)
    plotly_chart(left, sf.dot_product_histogram_figure(variance, d_k), width="stretch", key="scale_hist")
    plotly_chart(right, sf.variance_figure(variance, d_k), width="stretch", key="scale_variance")
    st.caption("Left: orange spreads wider as you raise d_k, blue stays put. Right: both axes are logarithmic, so the "
               "unscaled variance rising as a straight line means it grows in step with d_k.")

    st.header("2 · Big scores saturate the softmax")
    st.markdown(f"Feed one query's scores against {saturation.n_keys} keys to the softmax. When the scores are spread "
                "wide, the largest one takes almost all the weight: the entropy drops toward 0 and the top weight "
                "climbs toward 1. With the √d_k division the row keeps the same shape whatever d_k is.")
    st.latex(sf.entropy_latex(saturation.n_keys))
    plotly_chart(st, sf.saturation_figure(saturation, d_k), width="stretch", key="scale_saturation")

    st.header("3 · A saturated softmax passes back almost no gradient")
    st.markdown("Training moves Q and K through the softmax's Jacobian J. When one weight is nearly 1 and the rest "
                "nearly 0, every entry of J is nearly 0, so the gradient that should teach Q and K vanishes and "
                "learning stalls. Scaled scores keep J, and so the gradient, a healthy size.")
    st.latex(sf.jacobian_latex())
    plotly_chart(st, sf.gradient_figure(gradient, d_k), width="stretch", key="scale_gradient")
    st.caption(f"At d_k = {d_k}: mean ‖J‖ = {gradient.jacobian_norm_unscaled[i]:.3f} unscaled, "
               f"{gradient.jacobian_norm_scaled[i]:.3f} scaled (the largest possible is 0.5).")

    st.header("4 · On the real model")

    model = view.model
    st.markdown(f"Multiply every layer's scores by a factor times the trained 1/√d_k (d_k = {model.d_head} in "
                f"{model.name}). Above 1 the softmax sharpens, below 1 it flattens; because each layer feeds the next, "
                "later layers drift further than the first. This part uses its own factor, not the sidebar's scaling.")
    seeded = ui.seed_from_url("scale_factor", sf.factor_from_url)  # scale_factor=4.0 in a link works too
    factor = st.select_slider("Scale factor (× 1/√d_k)", sf.FACTOR_STEPS, **({"value": 1.0} if seeded else {}),
                              key="scale_factor", format_func=lambda f: f"{f:g}",
                              help="1 = as trained; the link carries it as scale_factor.", **ui.BOUND)
    st.latex(sf.factor_latex(factor, model.d_head))
    scale = True if factor == 1 else sf.factor_scale(factor, model.d_head)  # ×1 is the trained run: reuse it
    view, head = ui.page.layer_and_head("scale_head", "The real-model part appears")
    layer = view.layer
    res, trained = view.run(scale=scale), view.run(scale=True)
    ui.run_notes(res)
    n = len(res.tokens)
    left, right = st.columns([3, 2], gap="large")
    with left:
        heatmap(res.attentions[layer, head], res.labels, key="scale_head_map",
                title=f"layer {layer}, head {head} at ×{factor:g}: weights after softmax")
    at_factor, at_trained = entropy_per_layer(res.attentions), entropy_per_layer(trained.attentions)
    plotly_chart(right, sf.entropy_per_layer_figure(at_factor.tolist(), at_trained.tolist(), factor, n),
                       width="stretch", key="scale_entropy")
    right.caption(f"Mean entropy over all heads and rows: {float(at_factor.mean()):.2f} nats at ×{factor:g} against "
                  f"{float(at_trained.mean()):.2f} as trained. Lower = peakier rows.")
ui.mark_drawn(view)
