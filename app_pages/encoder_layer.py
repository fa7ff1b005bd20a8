"""The encoder layer: Step by step continued past W_O, through residual, LayerNorm and the FFN, for one token,
recomputed from the layer's weights and checked against the model; then the residual stream over all layers.
The decoder block of an encoder–decoder has its own page next to this one (app_pages/decoder_block.py); a link here
that still carries its keys (dec_*, or a lecture's fig=decoder_block) gets a note that opens it with them."""

from urllib.parse import urlencode

import streamlit as st

import ui
from attnviz.lessons.encoder_layer.figures import stream_figure, vector_bars
from attnviz.lessons.encoder_layer.latex import layer_norm_numbers, stage_latex, trace_check
from attnviz.lessons.encoder_layer.norms import stream_norms
from attnviz.lessons.encoder_layer.steps import PAPER_SIZES, layer_order, layer_steps, layer_title, model_sizes
from ui.charts import plotly_chart
from ui.token_link import follow_token, token_drawn

# the title is drawn before the pickers: it names the parts of the model they will hold (the link's, on a first run)
title = layer_title(ui.view_state(state=ui.page.FirstFrame()).model.cfg)
view = ui.open_page(title,
                    "Step by step stops at W_O. Here the same layer goes on: the residual connection, the norm and "
                    "the feed-forward network, for one token, with every number recomputed from the layer's weights. "
                    "Red bars are positive, blue negative.", waits_for_text="The layer appears", layer_heads="layer")
if layer_title(view.model.cfg) != title:  # the pickers ended on another model than the link named: draw it again
    st.rerun()
# an old link (the decoder block was this page's last section): say where it went, with its keys, before anything else
old_keys = {k: st.query_params[k] for k in st.query_params if k.startswith("dec_")}
if old_keys or st.query_params.get("fig") == "decoder_block":
    st.info("The decoder block has moved to its own page: [open The decoder block with this link's settings]"
            f"(./decoder_block{'?' + urlencode(old_keys) if old_keys else ''}).", icon=":material/arrow_forward:")


with ui.guard("The encoder-layer page"):
    model, layer = view.model, view.layer
    st.caption("Next: [The decoder block](./decoder_block) of an encoder–decoder, masked self-attention → "
               "cross-attention → FFN, with its numbers, on its own page.")
    res = view.run(keep=True)
    ui.run_notes(res)
    labels, n = res.labels, len(res.labels)

    st.header("The original paper's sizes beside this model's")
    mine, paper = model_sizes(model), PAPER_SIZES
    ui.table(st, [{"": name, "Transformer base (2017)": getattr(paper, attr), model.name: getattr(mine, attr)}
                  for name, attr in (("d_model", "d_model"), ("FFN width d_ff", "d_ff"), ("layers N", "n_layers"),
                                     ("heads h", "n_heads"), ("d_head", "d_head"))], hide_index=True)
    if mine.n_heads * mine.d_head != mine.d_model:
        st.caption(f"In {model.name} d_head is set by its config: {mine.n_heads} heads × {mine.d_head} = "
                   f"{mine.n_heads * mine.d_head} ≠ d_model {mine.d_model}; W_Q maps {mine.d_model} → "
                   f"{mine.n_heads * mine.d_head} and W_O maps it back.")

    order = layer_order(model)  # a family whose layer order attnviz does not know stops here, with a message
    st.header(f"Layer {layer}, one token, stage by stage ({order})")
    if order == "pre-RMSNorm":
        st.latex(r"x^{\text{mid}} = x + \mathrm{Attn}\big(\mathrm{RMSNorm}_1(x)\big),\qquad "
                 r"x^{\text{out}} = x^{\text{mid}} + "
                 r"W_{\text{down}}\big(\mathrm{silu}(u\,W_{\text{gate}}) \odot u\,W_{\text{up}}\big),"
                 r"\quad u = \mathrm{RMSNorm}_2(x^{\text{mid}})")
        st.latex(r"\mathrm{RMSNorm}(u)_i = \frac{u_i}{\sqrt{\tfrac{1}{C}\sum_j u_{ij}^2 + \varepsilon}} \odot g,\qquad "
                 r"\mathrm{silu}(z) = z\,\sigma(z)")
        st.caption(f"{model.name} is a Llama-family decoder block, not an encoder layer: its attention is causal "
                   "(token i sees tokens 0 .. i only) and RoPE rotates the queries and keys inside it. Like GPT-2 it is "
                   "pre-norm, but with RMSNorm (divide by the root mean square; no centring, no bias) and a SwiGLU MLP.")
    elif order == "post-LN":
        st.latex(r"x^{\text{mid}} = \mathrm{LN}_1\big(x + \mathrm{MHA}(x)\big),\qquad "
                 r"x^{\text{out}} = \mathrm{LN}_2\big(x^{\text{mid}} + \mathrm{FFN}(x^{\text{mid}})\big)")
        st.caption(f"{model.name} is post-LN, like BERT and the original paper: each sub-layer's result is added to "
                   "its input, then normalised.")
    else:
        st.latex(r"x^{\text{mid}} = x + \mathrm{MHA}\big(\mathrm{LN}_1(x)\big),\qquad "
                 r"x^{\text{out}} = x^{\text{mid}} + \mathrm{FFN}\big(\mathrm{LN}_2(x^{\text{mid}})\big)")
        st.caption(f"{model.name} is pre-LN, like GPT-2: each sub-layer reads a normalised copy and adds its result "
                   "to the residual stream, which is never normalised inside the layer.")
    steps = layer_steps(model, res, layer)
    follow_token("enc_token", labels, min(2, n - 1), "picked", link_says=st.query_params.get("enc_token"))
    ui.clamp_token_choice("enc_token", n)
    pick = st.columns([2, 1])
    i = pick[0].selectbox("Token i", list(range(n)), index=min(2, n - 1), key="enc_token",
                          format_func=lambda t: f"{t}: {labels[t]}" if 0 <= t < n else str(t), **ui.BOUND)
    token_drawn("enc_token", labels)
    first = pick[1].slider("Features drawn (at most)", 4, 64, 32, key="enc_first", **ui.BOUND)
    for number, stage in enumerate(steps.stages, start=1):
        st.subheader(f"{number}. {stage.title}", divider="gray")
        st.markdown(stage.note)
        st.latex(stage_latex(stage, i))
        if stage.key in steps.ln:
            st.latex(layer_norm_numbers(steps, stage.key, i))
        width = stage.value.shape[1]
        plotly_chart(st, vector_bars(stage.value[i], f"{stage.title}, token {i} ({labels[i]}), {width} features",
                                       first), width="stretch", key=f"enc_bars_{stage.key}")
    st.latex(trace_check(steps.trace_gaps))
    worst = max(steps.trace_gaps.values())
    if worst < 1e-4:
        st.caption("Recomputed here from the layer's weights, compared with what the model's own forward pass kept: "
                   "the differences are float32 rounding.")
    else:
        st.warning(f"The recomputation differs from the model's forward pass by {worst:.2e}.")

    st.header("The residual stream across the layers")
    st.markdown("For every layer: how long the token vectors are when they enter it, how long the vectors that "
                "attention and the FFN add are, and how much the layer changes the stream overall (mean over tokens)."
                + (" In this post-LN model a LayerNorm follows each addition, so the stream's length is reset every "
                   "time." if order == "post-LN" else " In this pre-norm model nothing normalises the stream inside "
                   "the layers, so it can grow."))
    norms = stream_norms(model, res)
    plotly_chart(st, stream_figure(norms), width="stretch", key="enc_norms")
    ui.table(st, [{"layer": L, "‖x‖ entering": round(float(norms.x_in[L]), 3),
                   "‖attention's update‖": round(float(norms.attn_update[L]), 3),
                   "‖FFN's update‖": round(float(norms.ffn_update[L]), 3),
                   "relative change": f"{float(norms.relative_change[L]):.1%}"} for L in range(model.n_layers)],
                 hide_index=True)
ui.mark_drawn(view)
