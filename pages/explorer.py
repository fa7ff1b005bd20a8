"""The explorer (home page): every head of one layer as heatmaps, beside the math that made them."""

import math

import streamlit as st

from pages import _ui as ui

st.title("Attention explorer")
st.caption("Each heatmap is one attention head: row = the query token that is looking, column = the key token it "
           "looks at, colour = its weight after the softmax (each row sums to 1). Hover a cell for the numbers.")
loading = ui.show_loading_chart("Loading the model and computing every head's attention…")
settings = ui.page_settings()

with ui.guard("The explorer"):
    from attnviz.analysis.stats import head_entropy, head_max_weight, live_rows
    from attnviz.draw.describe import describe_effect, describe_mask, describe_scale, head_facts
    from attnviz.draw.export import attentions_npz, head_csv
    from attnviz.draw.latex import attention_equation, mask_matrix, multi_head_equation
    from attnviz.draw.plotting import head_figure, head_grid_figure

    model, spec = ui.load_model_or_fallback(settings)
    layer, heads = ui.layer_and_heads(model.n_layers, model.n_heads)
    facts = st.empty()
    badge = st.empty()

    res, mask_spec = ui.page_run(model, spec, settings, "The heatmaps appear")
    n = len(res.tokens)
    facts.markdown(f"**{model.name}** · {model.n_layers} layers × {model.n_heads} heads · "
                   f"{head_facts(model.d_model, model.n_heads, model.d_head, model.n_kv_heads)} · **{n} tokens** · "
                   f"device `{model.device.type}`")
    dead = [f"{i}:{res.labels[i]}" for i in (~live_rows(res.attentions[layer, 0])).nonzero().flatten().tolist()]
    if dead:
        st.warning(f"The mask forbids every key for query row(s) {', '.join(dead)}: those rows get zero weights and a "
                   f"zero output (the policy PyTorch's SDPA uses), shown as empty rows.", icon=":material/block:")

    left, right = st.columns([2, 1], gap="medium")
    weights = res.attentions[layer]  # (n_heads, n, n)
    entropy, peak = head_entropy(weights), head_max_weight(weights)
    titles = [f"head {h} · H {entropy[h]:.2f} · max {peak[h]:.2f}" for h in heads]
    with left:
        st.subheader(f"Layer {layer}: {len(heads)} head(s)")
        st.caption(f"Rows: the query token that looks; columns: the key token it looks at. Above each head: H = mean "
                   f"row entropy in nats (0 = all weight on one key, ln {n} ≈ {math.log(n):.2f} = spread evenly), "
                   "max = mean of each row's largest weight: high max and low H mean a sharp, confident head.")
        fig, block = head_grid_figure(weights, res.labels, heads, subtitles=titles)
        st.plotly_chart(fig, width="stretch", key="grid")
        loading.empty()
        if block > 1:
            st.info(f"Overview: with {n} tokens each cell above averages a {block}×{block} block of tokens, so the grid "
                    "stays fast. The enlarged head below shows every token.", icon=":material/zoom_in:")
    with right:
        st.subheader("The math")
        st.latex(attention_equation(res.scale, model.d_head, res.mask is not None))
        window = getattr(model, "shared_window", None)  # Mistral's sliding window, part of the model
        st.markdown(f"**Mask.** {describe_mask(mask_spec, causal_model=model.cfg.causal, builtin_window=window)}")
        if res.mask is not None:
            st.latex(mask_matrix(res.mask, n))
        else:
            st.latex(r"\small M = 0\ \text{everywhere (nothing is masked)}")
        st.markdown(f"**Scaling.** {describe_scale(res.scale, model.d_head, trained=model.source is not None)}")
        effect = describe_effect(mask_spec, res.scale, model.d_head, trained=model.source is not None)
        if effect:
            st.info(effect, icon=":material/repeat:")
        st.latex(multi_head_equation(model.n_heads, model.d_model, model.d_head))
        st.caption("Every number on this page is computed by attnviz's own from-scratch attention; the badge above "
                   "compares it with transformers' implementation at the trained settings.")

    st.subheader("One head in full detail")
    focus = st.selectbox("Head to enlarge", heads, key="focus", **ui.BOUND)
    st.plotly_chart(head_figure(weights[focus], res.labels, f"layer {layer}, head {focus}: weights after softmax"),
                    width="stretch", key="focus_head")

    downloads = st.columns(2)
    # Both files are made only when clicked: compressing 6×12×512² weights on every rerun cost seconds.
    downloads[0].download_button("Download this head's weights (CSV)", lambda: head_csv(res, layer, focus),
                                 file_name=f"attnviz_layer{layer}_head{focus}.csv", mime="text/csv")
    downloads[1].download_button(
        "Download all layers and heads (NPZ)",
        lambda: attentions_npz(res, {"model": model.name, "text": settings.text, "mask": mask_spec, "scale": res.scale}),
        file_name="attnviz_attentions.npz", mime="application/octet-stream")

    with st.spinner("Checking against transformers…"):
        try:
            truth = ui.cached_truth(spec, settings.device, settings.text)
            if truth.max_abs_diff is None:
                badge.info(f"Truth check: no transformers reference, since {truth.reason}.", icon=":material/info:")
            elif truth.matches:
                badge.success(f"✓ matches transformers: the Hugging Face library computes the same weights for this "
                              f"text. Largest difference {truth.max_abs_diff:.1e} over every layer, head and cell "
                              "(tolerance 1e-5; checked at the trained settings: no mask, 1/√d_k).")
            else:
                badge.error(f"✗ differs from transformers: max |Δ| = {truth.max_abs_diff:.1e} (tolerance 1e-5).")
        except Exception as err:
            badge.warning(f"Truth check unavailable: {err}")
