"""KV cache: step through greedy decoding, watch the cache grow, prove it changes nothing, time it, size it."""

import streamlit as st

import ui
from attnviz.lessons.kv_cache.decoding import (
    MAX_NEW,
    agreement,
    decode_both,
    median_step_times,
    step_view,
    trained_for,
    writes_text,
)
from attnviz.lessons.kv_cache.figures import memory_figure, step_sentence, timing_figure, timing_sentence
from attnviz.lessons.kv_cache.memory import human_bytes, known_models_table, variants_of
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared
from ui.runs import model_for

# a block of random words, then its start again: tiny-llama (trained on blocks written twice) continues the copy,
# and so does any model with induction heads
DEFAULT_PROMPT = "parents heard voice among full turned network third museum described parents heard voice"


@shared(max_entries=16)
def _decode(spec: str, device: str, prompt: str, n_new: int):
    """Both generations (with and without the cache), measured in this process; cached per request."""
    return decode_both(model_for(spec, device), prompt, n_new)


@shared(max_entries=16)
def _timings(spec: str, device: str, prompt: str, n_new: int):
    """Median ms per step over 3 generations each way, measured in this process; cached per request."""
    model = model_for(spec, device)
    return (median_step_times(model, prompt, n_new, cache=True), median_step_times(model, prompt, n_new, cache=False))


@shared(max_entries=64)
def _step_view(spec: str, device: str, prompt: str, n_new: int, step: int, layer: int, head: int):
    cached, _ = _decode(spec, device, prompt, n_new)
    return step_view(model_for(spec, device), cached, step, layer, head)


view = ui.open_page("KV cache: how a decoder writes one token at a time", lesson=ui.LessonModel(
    writes_text, "attnviz-tiny-llama",
    "{model} is an encoder: it reads the whole text at once and never writes text token by token, so it has no KV "
    "cache. This page shows **tiny-llama**, the 2-layer Llama attnviz trained on repeated words; the sidebar's model "
    "stays as it is for the other pages. Pick GPT-2 or a Llama, Qwen2 or Mistral folder under *other* to decode "
    "with another causal model."), settings=("model",),  # its own prompt; greedy decoding at the trained settings
    subject=ui.Subject("The prompt", "kv_prompt", DEFAULT_PROMPT))
st.markdown(
    "A causal model writes text one token per step. Each step, the newest token's **query** is compared with the "
    "**keys** of every token so far, and the resulting weights mix their **values**. The keys and values of earlier "
    "tokens never change (a causal mask stops them from seeing later tokens), so a decoder keeps them in a "
    "**KV cache** and computes only the newest token's query, key and value. The cache saves time; it costs memory.")

with ui.guard("The KV-cache lesson"):
    model, spec = view.model, view.model_spec
    c = st.columns([3, 1])
    prompt = c[0].text_input("Prompt", DEFAULT_PROMPT, key="kv_prompt", max_chars=4000, **ui.BOUND)
    n_new = c[1].number_input(f"New tokens (1–{MAX_NEW})", 1, MAX_NEW, 12, key="kv_new", **ui.BOUND)
    with st.spinner("Decoding twice: with the cache and without…"):
        cached, full = _decode(spec, view.device, prompt, int(n_new))
    st.markdown(f"**{model.name}** · {model.n_layers} layers × {model.n_heads} query heads, **{model.n_kv_heads} K/V "
                f"heads** · prompt {cached.n_prompt} tokens → wrote: **{' '.join(cached.labels[cached.n_prompt:])}**")
    if trained_for(model.name):
        st.caption(trained_for(model.name))

    with ui.figure("decode_step"):  # a lecture step's focus: what one step computes
        st.subheader("One step of decoding")
        pick = st.columns(3)
        if len(cached.steps) > 1:
            step = pick[0].slider("Step", 0, len(cached.steps) - 1, 0, key="kv_step", **ui.BOUND)
        else:  # one new token (or the model stopped after one): one step, and a slider needs two ends
            step = 0
            pick[0].markdown("**Step 0**, the only step of this decoding")
        layer = pick[1].selectbox("Layer", list(range(model.n_layers)), key="kv_layer", **ui.BOUND)
        head = pick[2].selectbox("Query head", list(range(model.n_heads)), key="kv_head", **ui.BOUND)
        v = _step_view(spec, view.device, prompt, int(n_new), step, layer, head)
        n = len(v.labels)
        st.markdown(step_sentence(step, n, v.labels[-1], v.new_token, head, v.kv_head, model.n_heads,
                                  model.n_kv_heads))
    heatmap(v.query, [v.labels[-1]], None, key="kv_q", kind="signed",
            title=f"the new query q (layer {layer}, head {head}, after RoPE)", x_title="feature of d_head")
    left, right = st.columns(2)
    with left:
        heatmap(v.keys, v.labels, None, key="kv_k", kind="signed",
                title=f"cached keys K ({n} × {model.d_head}), newest last", x_title="feature of d_head")
    with right:
        heatmap(v.values, v.labels, None, key="kv_v", kind="signed",
                title=f"cached values V ({n} × {model.d_head})", x_title="feature of d_head")
    heatmap(v.scaled_scores, [v.labels[-1]], v.labels, key="kv_scores", kind="signed",
            title="scaled scores q·Kᵀ/√d_head", x_title="key (cached token)")
    heatmap(v.weights, [v.labels[-1]], v.labels, key="kv_row", kind="weights",
            title="the attention row: weights after softmax, as the generation used them")
    st.caption(f"softmax of the scaled scores above vs. the row the generation kept: max |difference| = "
               f"{v.recomputed_difference:.1e}")

    st.subheader("The cache changes nothing but the time")
    a = agreement(cached, full)
    m = st.columns(3)
    m[0].metric("Same tokens both ways", "yes" if a.same_tokens else "NO",  # short labels: a third of 1024 px
                help="The tokens written with the cache equal those written without it.")
    m[1].metric("Max |Δ| of attention rows", f"{a.max_abs_difference:.1e}",
                help="The largest difference between the cached and the recomputed attention rows, over every step, "
                     "layer and head.")
    m[2].metric("Steps compared", a.n_steps)
    st.caption("Every step's attention row, in every layer and head, from cached decoding vs. recomputing the "
               "whole context from scratch: computed live on this page.")

    st.subheader("Time per token as the context grows")

    with st.spinner("Timing both ways (3 runs each)…"):
        timings = _timings(spec, view.device, prompt, int(n_new))
        plotly_chart(st, timing_figure(*timings), width="stretch", key="kv_time")
    st.caption("Median of 3 runs, measured on this server when the page first ran this request (then cached), on "
               f"{view.device}. Without the cache every step runs all tokens through the model again; with it, "
               "one. On a tiny model fixed costs dominate both, so the gap is small; it grows with model size and "
               "context. Step 0 is left out: with the cache it also runs the whole prompt (the prefill). "
               + timing_sentence(*timings))

    st.subheader("Memory: MHA vs GQA vs MQA")

    st.latex(r"\text{bytes per token} = n_\text{layers}\cdot 2\,(K,V)\cdot n_\text{kv heads}\cdot d_\text{head}"
             r"\cdot 2\ \text{bytes (16-bit)}")
    rows = variants_of(model.n_layers, model.n_heads, model.n_kv_heads, model.d_head)
    plotly_chart(st, memory_figure(rows, f"{model.name}: KV cache per token of context"), width="stretch", key="kv_mem")
    st.markdown(" · ".join(f"{r['attention']}: {r['K/V heads']} K/V heads → {human_bytes(r['bytes per token'])}"
                           for r in rows))
    st.markdown("Well-known models, from their published config.json (num_hidden_layers, num_attention_heads, "
                "num_key_value_heads, hidden_size):")
    ui.table(st, known_models_table(), hide_index=True, width="stretch", column_config={
        "KiB per token": st.column_config.NumberColumn(format="%.0f"),
        "GiB per 4096 tokens": st.column_config.NumberColumn(format="%.2f"),
        "source": st.column_config.LinkColumn("source (config.json)")})
ui.mark_drawn(view)
