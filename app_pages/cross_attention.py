"""Cross-attention: queries from a target text, keys and values from a source text, target × source per head."""

import streamlit as st

import ui
from attnviz.lessons.cross_attention.views import can_cross_attend
from ui import heatmap as _heatmap
from ui.memo import shared
from ui.runs import model_for

DEFAULT_SOURCE = "The cat sat on the mat."
DEFAULT_TARGET = "Le chat était assis sur le tapis."


@shared(max_entries=16)
def _view(spec: str, device: str, source: str, target: str, layer: int, mask_spec: str, scale):
    from attnviz.lessons.cross_attention.views import cross_view

    return cross_view(model_for(spec, device), source, target, layer, mask=mask_spec, scale=scale)


@shared(max_entries=16)
def _truth(spec: str, device: str, source: str, target: str | None):
    from attnviz.engine.truth import check_against_transformers

    return check_against_transformers(model_for(spec, device), source, target=target)


view = ui.open_page("Cross-attention: the decoder reads the source", lesson=ui.LessonModel(
    can_cross_attend, "",
    "{model} is a decoder with rotary positions: it has no encoder to read a source, and the demonstration below "
    "(an encoder's projections applied across two sentences) needs one. This page shows the bundled "
    "all-MiniLM-L6-v2 instead; the sidebar's model stays as it is for the other pages."))
st.markdown(
    "In an **encoder–decoder** (the shape of the original Transformer, used for translation and summarisation) "
    "the encoder reads the whole *source* sentence with ordinary self-attention. The decoder writes the *target* "
    "one token at a time, and each decoder layer attends twice: first to the target tokens written so far "
    "(self-attention with a **causal** mask, so no position sees the words after it), then to the encoder's "
    "output. That second step is **cross-attention**: the **queries** come from the target, the **keys and "
    "values** from the source. Nothing in the source is in the future, so no causal mask applies there: every "
    "target position may read every source token. The weights form a rectangle, target rows × source columns, "
    "and a row says which source words that target position draws on (in translation, often the word it "
    "translates)."
)

with ui.guard("The cross-attention page"):
    from attnviz.lessons.cross_attention.latex import cross_attention_equation
    from attnviz.lessons.cross_attention.views import (
        cross_layers,
        decoder_mask_spec,
        is_encoder_decoder,
        wordpiece_note,
    )

    texts = st.columns(2)
    source = texts[0].text_area("Source (read by the encoder: keys and values)", DEFAULT_SOURCE, key="xa_source",
                                height=90, max_chars=5000, **ui.BOUND)
    target = texts[1].text_area("Target (written by the decoder: queries)", DEFAULT_TARGET, key="xa_target",
                                height=90, max_chars=5000, **ui.BOUND)
    model, spec = view.model, view.model_spec
    real = is_encoder_decoder(model)
    n_layers, n_heads = cross_layers(model)
    pick = st.columns([1, 2, 2])
    layer = pick[0].selectbox("Decoder layer" if real else "Layer", list(range(n_layers)), key="xa_layer", **ui.BOUND)
    heads = pick[1].multiselect("Heads (empty = all)", list(range(n_heads)), default=[], key="xa_heads", **ui.BOUND)
    heads = sorted(heads) or list(range(n_heads))
    if real:
        pick[2].caption(f"**{model.name}** is an encoder–decoder: this is its own cross-attention "
                        f"(`encoder_attn`), {n_layers} decoder layers × {n_heads} heads.")
    else:
        pick[2].caption(f"**{model.name}** has no decoder, so no cross-attention of its own: below, **layer {layer}'s "
                        "projections applied across two sentences**.")

    if not source.strip() or not target.strip():
        st.warning(f"Type a {'source' if not source.strip() else 'target'} text: cross-attention needs both.",
                   icon=":material/edit:")
        st.stop()
    mask_spec, mask_note = decoder_mask_spec(model, target, view.mask_choice) if real else ("none", None)
    if mask_note:
        st.info(mask_note, icon=":material/grid_on:")
    with st.spinner("Running the attention…"):
        xv = _view(spec, view.device, source, target, layer, mask_spec, view.scale)
    for note in xv.notes:
        st.info(note, icon=":material/content_cut:")
    T, S = len(xv.target_labels), len(xv.source_labels)

    if not real:
        st.warning(
            f"**Demonstration: layer {layer}'s projections applied across two sentences.** {model.name} is an "
            "encoder-only model and never computes cross-attention. Here each sentence is run through the model on its "
            f"own up to layer {layer}; then layer {layer}'s real W_Q is applied to the target's layer-{layer} input and "
            "its real W_K, W_V to the source's, per head. The arithmetic is exactly cross-attention's; the weights were "
            "trained for self-attention, so read the patterns as 'what these projections match', not as translation.",
            icon=":material/science:")
        from attnviz.lessons.cross_attention.views import near_diagonal_share, position_warning, words_reversed

        flipped = _view(spec, view.device, source, words_reversed(target), layer, mask_spec, view.scale)
        warning = position_warning(model.name, near_diagonal_share(xv.weights), near_diagonal_share(flipped.weights),
                                   has_positions=model.cfg.positions != "none")
        if warning:
            st.warning(warning, icon=":material/swap_horiz:")
        st.caption("Offline, this demonstration is what is available: no trained encoder–decoder ships with attnviz. "
                   "For a real one, pick **other** in the sidebar's Model and name a BART model: a hub name such as "
                   "`facebook/bart-base` (needs the network) or a local BART folder.")
    badge = st.empty()

    st.subheader("The math, with this run's shapes")
    st.latex(cross_attention_equation(T, S, xv.d_model, xv.d_head, xv.scale))
    st.markdown(
        f"X_target: the decoder's stream entering this sublayer ({T} × {xv.d_model}); X_source: the encoder's "
        f"output ({S} × {xv.d_model}). Each of the {xv.n_heads} heads has its own W_Q, W_K, W_V "
        f"({xv.d_model} × {xv.d_head}); the heads' outputs are concatenated and multiplied by W_O, as in "
        "self-attention. Only where Q and K, V come from differs." if real else
        f"X_target, X_source: each sentence's own input to layer {layer} ({T} × {xv.d_model} and {S} × "
        f"{xv.d_model}); W_Q, W_K, W_V: layer {layer}'s real projections, {xv.d_model} × {xv.d_head} per "
        "head (biases included). No mask: every target query reads every source token.")
    st.markdown(
        "**Dials.** The sidebar's scaling applies to every attention (encoder, decoder and cross). The sidebar's "
        "mask applies only to the decoder's self-attention, on top of its causal mask; cross-attention is never "
        "masked." if real else
        "**Dials.** The sidebar's scaling applies to this product; the sidebar's mask is not used here.")

    st.subheader(f"{'Decoder layer' if real else 'Layer'} {layer}: target × source weights, {len(heads)} head(s)")
    st.caption(f"Rows: the {T} target tokens (queries); columns: the {S} source tokens (keys). Colour = weight after "
               "the softmax; each row sums to 1 over the source. Hover a cell for its numbers; one head in full "
               "detail below.")
    pieces = wordpiece_note({"source": xv.source_labels, "target": xv.target_labels})
    if pieces:
        st.info(pieces, icon=":material/extension:")
    # Fixed-width panels in a wrapping row: for a short source, two per row on a 1024 px screen, five on a 1920 px one
    flow = st.container(horizontal=True, wrap=True, gap="medium")
    for i, h in enumerate(heads):
        with flow.container(width=min(480, max(260, 100 + 18 * S))):
            _heatmap.heatmap(xv.weights[h], xv.target_labels, xv.source_labels, key=f"xa_grid_{i}",
                             title=f"head {h}", show_values=False)

    st.subheader("One head in full detail")
    focus = st.columns([1, 3])[0].selectbox("Head", heads, key="xa_focus", **ui.BOUND)
    _heatmap.heatmap(xv.weights[focus], xv.target_labels, xv.source_labels, key="xa_focus_head",
                     title=f"{'decoder ' if real else ''}layer {layer}, head {focus}: cross-attention weights "
                           "(target × source)")
    if real:
        st.markdown("**For contrast: the same head's self-attention in the decoder (causal).** Target × target: each "
                    "target position may look only at itself and the positions before it (every cell above the "
                    "diagonal is exactly 0). The first target token is the decoder start token: the target is shifted "
                    "one place right, as in training, so position t predicts target token t.")
        _heatmap.heatmap(xv.decoder_self[focus], xv.target_labels, key="xa_self",
                         title=f"decoder layer {layer}, head {focus}: self-attention weights")

    def matched(truth) -> str:
        if real:
            parts = ", ".join(f"{k} {v:.1e}" for k, v in truth.parts.items())
            return (f"✓ matches transformers: its BART computes the same encoder, decoder and cross-attention weights "
                    f"for these texts (largest difference per kind: {parts}; tolerance 1e-5; checked at the trained "
                    "settings: no extra mask, 1/√d_k).")
        return (f"✓ the projections used here are {model.name}'s real ones: its self-attention on the source equals "
                f"transformers' (largest difference {truth.max_abs_diff:.1e}, tolerance 1e-5). transformers has no "
                "cross-attention for this model to compare with.")

    ui.truth_badge(badge, lambda: _truth(spec, view.device, source, target if real else None), matched)
ui.mark_drawn(view)
