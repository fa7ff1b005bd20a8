"""Cross-attention: queries from the decoder's target, keys and values from the encoder's source, target × source
per head. By default attnviz-tiny-bart (numbers in words -> digits) writing its own answer; a BART the sidebar
names (hub or folder) shows its own cross-attention for a typed target."""

import time

import streamlit as st

import ui
from attnviz.engine.truth import check_against_transformers
from attnviz.lessons.cross_attention.latex import cross_attention_equation
from attnviz.lessons.cross_attention.number_task import (
    ALIGNMENT_CLAIM,
    DEFAULT_SOURCE,
    EXAMPLES,
    check_digit_target,
    check_source,
    greedy_output,
    strongest_links,
    task_description,
    written_labels,
)
from attnviz.lessons.cross_attention.views import (
    cross_layers,
    cross_view,
    decoder_mask_for,
    decoder_mask_name,
    decoder_mask_spec,
    is_encoder_decoder,
    wordpiece_note,
)
from attnviz.lessons.why_attention.tiny_bart import TINY_BART
from ui import heatmap_widget as _heatmap
from ui.memo import shared
from ui.page import setting_place
from ui.present import presenting
from ui.runs import model_for

GENERIC_SOURCE = "The cat sat on the mat."  # the first text a BART named in the sidebar gets
GENERIC_TARGET = "Le chat était assis sur le tapis."


@shared(max_entries=16)
def _view(spec: str, device: str, source: str, target: str, layer: int, mask_spec: str, scale):
    return cross_view(model_for(spec, device), source, target, layer, mask=mask_spec, scale=scale)


@shared(max_entries=32)
def _greedy(spec: str, device: str, source: str):
    return greedy_output(model_for(spec, device), source)


@shared(max_entries=16)
def _truth(spec: str, device: str, source: str, target: str):
    return check_against_transformers(model_for(spec, device), source, target=target)


APPLIED_MASK = "_xa_applied_mask"  # (the mask picked, the decoder mask the page applied for it) on the last run


def _mask_words(model, mask_choice: str, state) -> str:
    """The top row's mask button: what this page applies (the decoder's self-attention alone, over its built-in
    causal mask), from decoder_mask_spec's rules; whether a mask fits the target is known once the page ran it."""
    kept = state.get(APPLIED_MASK)
    applied = kept[1] if kept and kept[0] == mask_choice else decoder_mask_for(mask_choice, None)[0]
    return decoder_mask_name(applied)


def _keep_applied_mask(mask_choice: str, applied: str) -> None:
    """Keep the mask the page applied; when the top row named another (a mask that did not fit the target), draw the
    page once more so that the row names this one."""
    shown = _mask_words(None, mask_choice, st.session_state)
    st.session_state[APPLIED_MASK] = (mask_choice, applied)
    if presenting() and shown != decoder_mask_name(applied):
        st.rerun()


REPLACED = "_xa_replaced_source"  # (what the source box held before the example picker last wrote into it, when)
ECHO_SECONDS = 10.0  # a stale value comes with the next request, at once; a hand edit back to it takes longer


def _forget_example() -> None:
    """A source typed by hand is no longer the example the picker names. Two quick picks: the browser can send the
    second pick with the box's value from before the first pick was written into it, since it had not drawn that
    write yet; to Streamlit the box then "changed" back. That value is not typed, so the pick stays and its sentence
    goes back in the box. (Streamlit may call this before or after _take_example in that run: either way the second
    pick is what the box ends with.)"""
    picked, now = st.session_state.get("xa_example"), st.session_state.get("xa_source")
    before, when = st.session_state.get(REPLACED) or (None, 0.0)
    if picked in EXAMPLES and now == before and time.monotonic() - when < ECHO_SECONDS:
        st.session_state["xa_source"] = EXAMPLES[picked]
    elif not (picked in EXAMPLES and now == EXAMPLES[picked]):
        st.session_state["xa_example"] = None


def _take_example() -> None:
    """The example picker writes its sentence into the source box (before the box is drawn again)."""
    picked = st.session_state.get("xa_example")
    if picked in EXAMPLES:
        st.session_state[REPLACED] = (st.session_state.get("xa_source"), time.monotonic())
        st.session_state["xa_source"] = EXAMPLES[picked]


INTRO = (
    "In an **encoder–decoder** (the shape of the original Transformer, used for translation and summarisation) "
    "the encoder reads the whole *source* with ordinary self-attention. The decoder writes the *target* one token "
    "at a time, and each decoder layer attends twice: first to the target tokens written so far (self-attention "
    "with a **causal** mask, so no position sees the tokens after it), then to the encoder's output. That second "
    "step is **cross-attention**: the **queries** come from the target, the **keys and values** from the source. "
    "Nothing in the source is in the future, so no causal mask applies there: every target position may read "
    "every source token. The weights form a rectangle, target rows × source columns, and a row says which source "
    "tokens that target position draws on."
)

view = ui.open_page("Cross-attention: the decoder reads the source", lesson=ui.LessonModel(
    is_encoder_decoder, TINY_BART,
    "{model} has no decoder, so no cross-attention: shown here is attnviz-tiny-bart, an encoder–decoder trained "
    "on numbers in words → digits.", mask_words=_mask_words),
    settings=("model", "mask", "scale"),  # its own source and target (the mask: the decoder's self-attention)
    subject=ui.Subject("The source, in words", "xa_source", DEFAULT_SOURCE))

with ui.guard("The cross-attention page"):
    model, spec = view.model, view.model_spec
    tiny = spec == TINY_BART

    def about(where) -> None:
        where.markdown(INTRO)
        if tiny:
            where.markdown(task_description(model.name) + " To see another BART on this page, name it in the "
                           "sidebar's Model (other: a hub name or a local folder); the other pages keep the model "
                           "picked there.")

    if not presenting():  # on a projector it waits under the heatmaps, folded
        about(st.container())

    if tiny:
        top = st.columns([3, 2, 1, 2], vertical_alignment="bottom")
        source = top[0].text_input("Source: a number in words", DEFAULT_SOURCE, key="xa_source", max_chars=2000,
                                   help="Read by the encoder: the keys and values of cross-attention.",
                                   on_change=_forget_example, **ui.BOUND)
        top[1].selectbox("Examples", list(EXAMPLES), index=None, key="xa_example", on_change=_take_example,
                         placeholder="pick a sentence…")
        notes = check_source(model, source)  # unknown words, empty, too long: a clear message from here
        for note in notes:
            st.warning(note, icon=":material/straighten:")
        answer = _greedy(spec, view.device, source)
        said_at, typing_at = st.columns(2, vertical_alignment="center")
        typing = typing_at.toggle("Type the target (teacher forcing)", key="xa_typed", **ui.BOUND,
                                  help="Off: the decoder reads the model's own greedy answer. On: it reads the digits "
                                       "you type, shifted one place right, as in training.")
        if typing:
            typed = typing_at.text_input("Target in digits", "3412", key="xa_target", max_chars=400, **ui.BOUND,
                                         help="Digits and commas: what the decoder was trained to write.")
            check_digit_target(model, typed)
            target = typed
        else:
            target = " ".join(answer.tokens)
        said = (f"**Its own answer:** `{answer.text}` (greedy decoding, from-scratch BART)"
                + ("" if answer.finished else " (stopped at the length limit without writing </s>)"))
        if typing:
            said += (f". Below, the decoder reads **your target** `{target.strip()}` instead (teacher forcing, as in "
                     "training): each row is where the model should write that target's next token.")
        said_at.markdown(said)
    else:
        texts = st.columns(2)
        source = texts[0].text_area("Source (read by the encoder: keys and values)", GENERIC_SOURCE, key="xa_source",
                                    height=90, max_chars=5000, **ui.BOUND)
        target = texts[1].text_area("Target (written by the decoder: queries)", GENERIC_TARGET, key="xa_target",
                                    height=90, max_chars=5000, **ui.BOUND)
        if not source.strip() or not target.strip():
            st.warning(f"Type a {'source' if not source.strip() else 'target'} text: cross-attention needs both.",
                       icon=":material/edit:")
            st.stop()

    n_layers, n_heads = cross_layers(model)
    pick = top[2:] if tiny else st.columns([1, 2, 2])
    layer = pick[0].selectbox("Layer" if tiny else "Decoder layer", list(range(n_layers)), index=n_layers - 1 if tiny else 0,
                              key="xa_layer", **ui.BOUND)
    heads = pick[1].multiselect("Heads (empty = all)", list(range(n_heads)), default=[], key="xa_heads", **ui.BOUND)
    heads = sorted(heads) or list(range(n_heads))
    if not tiny:
        pick[2].caption(f"**{model.name}** is an encoder–decoder: this is its own cross-attention (`encoder_attn`), "
                        f"{n_layers} decoder layers × {n_heads} heads.")
    mask_spec, mask_note = decoder_mask_spec(model, target, view.mask_choice)
    _keep_applied_mask(view.mask_choice, mask_spec)
    if mask_note:
        st.info(mask_note, icon=":material/grid_on:")
    with st.spinner("Running the attention…"):
        xv = _view(spec, view.device, source, target, layer, mask_spec, view.scale)
    for note in xv.notes:
        st.info(note, icon=":material/content_cut:")
    rows = written_labels(xv.target_labels) if tiny else xv.target_labels
    T, S = len(xv.target_labels), len(xv.source_labels)

    if tiny:
        rows_said = (f"Rows: the {T} decoder positions (queries), each named *read→written*: the token the position "
                     "reads and the one it writes (the target is shifted one place right, so the position that reads "
                     "<s> writes the first digit). Columns: the source words (keys). Colour = weight after the "
                     "softmax; each row sums to 1. Hover or tap a cell for its numbers.")
    else:
        rows_said = (f"Rows: the {T} target tokens (queries); columns: the {S} source tokens (keys). Colour = weight "
                     "after the softmax; each row sums to 1 over the source. Hover or tap a cell for its numbers; one head in "
                     "full detail below.")
    # on a projector the first screen is for the heatmaps: the reading guide waits in the heading's tooltip
    st.subheader(f"Decoder layer {layer}: target × source weights, {len(heads)} head(s)",
                 help=rows_said if presenting() else None)
    if not presenting():
        st.caption(rows_said)
    pieces = None if tiny else wordpiece_note({"source": xv.source_labels, "target": xv.target_labels})
    if pieces:
        st.info(pieces, icon=":material/extension:")
    # Fixed-width panels in a wrapping row: for a short source, two per row on a 1024 px screen, four on a 1920 px one
    flow = st.container(horizontal=True, wrap=True, gap="medium")
    for i, h in enumerate(heads):
        with flow.container(width=min(480, max(420 if tiny else 260, 120 + 22 * S))):
            _heatmap.heatmap(xv.weights[h], rows, xv.source_labels, key=f"xa_grid_{i}", title=f"head {h}",
                             show_values=False)
    badge = st.empty()  # under the heatmaps: on a projector they come first
    if tiny:
        st.markdown(ALIGNMENT_CLAIM)
    if presenting():
        about(st.expander("What this page shows", expanded=False))

    with ui.figure("focus_head"):  # a lecture step's focus: the head whose rows answer its question
        st.subheader("One head in full detail")
        focus = st.columns([1, 3])[0].selectbox("Head", heads, index=heads.index(1) if tiny and 1 in heads else 0,
                                                key="xa_focus", **ui.BOUND)
        _heatmap.heatmap(xv.weights[focus], rows, xv.source_labels, key="xa_focus_head",
                         title=f"decoder layer {layer}, head {focus}: cross-attention weights (target × source)")
        if tiny:
            links = strongest_links(xv.weights[focus], rows, xv.source_labels)
            st.markdown(f"**Each row's strongest source word** (layer {layer}, head {focus}): "
                        + " · ".join(f"{link.row}: *{link.source}* ({link.weight:.2f})" for link in links))
    st.markdown("**For contrast: the same head's self-attention in the decoder (causal).** Target × target: each "
                "position may look only at itself and the positions before it (every cell above the diagonal is "
                "exactly 0). The first position reads the decoder start token </s>: the target is shifted one place "
                "right, as in training.")
    _heatmap.heatmap(xv.decoder_self[focus], rows, xv.target_labels, key="xa_self",
                     title=f"decoder layer {layer}, head {focus}: self-attention weights")

    st.subheader("The math, with this run's shapes")
    st.latex(cross_attention_equation(T, S, xv.d_model, xv.d_head, xv.scale))
    st.markdown(
        f"X_target: the decoder's stream entering this sublayer ({T} × {xv.d_model}); X_source: the encoder's "
        f"output ({S} × {xv.d_model}). Each of the {xv.n_heads} heads has its own W_Q, W_K, W_V "
        f"({xv.d_model} × {xv.d_head}); the heads' outputs are concatenated and multiplied by W_O, as in "
        "self-attention. Only where Q and K, V come from differs. The whole decoder layer, with its numbers, is on "
        "[The decoder block](./decoder_block) page.")
    st.markdown(
        f"**Dials.** {setting_place('scale').capitalize()} applies to every attention (encoder, decoder and cross). "
        f"{setting_place('mask', 'mask').capitalize()} applies only to the decoder's self-attention, on top of its "
        "causal mask; cross-attention is never masked."
        + (" The model's own answer is always written at the trained settings." if tiny else ""))

    def matched(truth) -> str:
        parts = ", ".join(f"{k} {v:.1e}" for k, v in truth.parts.items())
        return (f"✓ matches transformers: its BART computes the same encoder, decoder and cross-attention weights "
                f"for these texts (largest difference per kind: {parts}; tolerance 1e-5; checked at the trained "
                "settings: no extra mask, 1/√d_k).")

    ui.truth_badge(badge, lambda: _truth(spec, view.device, source, target), matched)
ui.mark_drawn(view)
