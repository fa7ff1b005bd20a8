"""The decoder block: one decoder layer of attnviz-tiny-bart (an encoder–decoder) assembled stage by stage (masked
self-attention -> cross-attention -> FFN, each followed by residual + LayerNorm), with the numbers of attnviz's
from-scratch recomputation, checked live against transformers' hidden states and attentions.

Its own page, next to the encoder layer (it was that page's last section, about 20 screens down under 18 plotly
charts: a lecture step on it opened on the wrong figures and took seconds to draw). Its figures (ui/focus.py ids):
`decoder_attention`, the layer's two attentions for one head side by side, and `decoder_stages`, one position's
vector through every stage in a single chart (one plotly chart for the eight stages, not one each).
Old links to /encoder_layer with dec_* keys get a note there that links here with the same keys."""

from __future__ import annotations

import html

import streamlit as st

import ui
from attnviz.engine.truth import check_decoder_block_against_transformers
from attnviz.lessons.cross_attention.number_task import DEFAULT_SOURCE, check_source, greedy_output, written_labels
from attnviz.lessons.encoder_layer.decoder_block import STAGE_ROWS, decoder_block_steps, decoder_stages
from attnviz.lessons.encoder_layer.figures import stages_heatmap
from attnviz.lessons.encoder_layer.latex import vector_numbers
from attnviz.lessons.why_attention.tiny_bart import TINY_BART
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap_bytes, heatmap_row
from ui.memo import shared
from ui.runs import model_for
from ui.token_link import follow_token, token_drawn


@shared(max_entries=16)
def _answer(device: str, source: str):
    return greedy_output(model_for(TINY_BART, device), source)


@shared(max_entries=16)
def _steps(device: str, source: str, target: str, layer: int):
    return decoder_block_steps(model_for(TINY_BART, device), source, target, layer)


@shared(max_entries=16)
def _truth(device: str, source: str, target: str, layer: int):
    return check_decoder_block_against_transformers(model_for(TINY_BART, device), source, target,
                                                    _steps(device, source, target, layer))


view = ui.open_page("The decoder block",
                    "One decoder layer of an encoder–decoder, stage by stage, with every number recomputed from its "
                    "weights.", settings=(),  # its own model and source: no shared setting changes it
                    subject=ui.Subject("The source, in words", "dec_source", DEFAULT_SOURCE))

with ui.guard("The decoder block"):
    model = model_for(TINY_BART, view.device)
    st.markdown(
        "An encoder–decoder's decoder layer has three sub-layers where the encoder layer has two: **masked "
        "self-attention** over the target written so far, **cross-attention** to the encoder's output, then the "
        "**feed-forward network**; each is followed by a residual addition and a LayerNorm (post-LN, as in BART). "
        f"Shown here for **{model.name}** (an encoder–decoder attnviz trained on numbers in words → digits, the "
        "model of the Cross-attention page), whatever model the other pages use: every number is attnviz's "
        "from-scratch recomputation of one decoder layer from its weights. The encoder side is on "
        "[The encoder layer](./encoder_layer).")
    st.latex(r"y^{(1)} = \mathrm{LN}_1\big(y + \mathrm{SelfMHA}_{\text{causal}}(y)\big),\quad "
             r"y^{(2)} = \mathrm{LN}_2\big(y^{(1)} + \mathrm{CrossMHA}(y^{(1)}, h)\big),\quad "
             r"y^{\text{out}} = \mathrm{LN}_3\big(y^{(2)} + \mathrm{FFN}(y^{(2)})\big)")
    st.caption("y: the decoder's stream (one row per decoder position); h: the encoder's output (one row per source "
               "token). A superscript in parentheses numbers the stage; a subscript t is a decoder position, u an "
               "earlier one, s a source token; j is a head, α its self-attention weights, β its cross-attention "
               "weights, and ‖_j sets the heads' results side by side.")
    top = st.columns([4, 1, 1], vertical_alignment="bottom")
    source = top[0].text_input("Source: a number in words (what the encoder reads)", DEFAULT_SOURCE,
                               key="dec_source", max_chars=2000, **ui.BOUND)
    layer = top[1].selectbox("Decoder layer", list(range(model.n_decoder_layers)), index=model.n_decoder_layers - 1,
                             key="dec_layer", **ui.BOUND)
    head = top[2].selectbox("Head", list(range(model.n_decoder_heads)), index=1, key="dec_head", **ui.BOUND)
    for note in check_source(model, source):
        st.warning(note, icon=":material/straighten:")
    answer = _answer(view.device, source)
    target = " ".join(answer.tokens)
    steps = _steps(view.device, source, target, layer)
    rows = written_labels(steps.decoder_labels)
    T, S, C, F = len(rows), len(steps.source_labels), steps.y_in.shape[1], steps.ffn_hidden.shape[1]
    st.markdown(f"The decoder reads the model's own answer `{answer.text}` shifted one place right: its {T} positions "
                f"read {', '.join(steps.decoder_labels)} and write the next token each (rows named *read→written*). "
                f"The encoder's output h has one vector per source token: {S} × {C}.")

    with ui.figure("decoder_attention"):
        st.subheader(f"Decoder layer {layer}, head {head}: its two attentions", divider="gray")
        heatmap_row("dec_attention", [
            heatmap_bytes(steps.self_weights[head], rows, steps.decoder_labels, key="dec_self",
                          title="1. masked self-attention α"),
            heatmap_bytes(steps.cross_weights[head], rows, steps.source_labels, key="dec_cross",
                          title="2. cross-attention β", x_title="source token (key)")])
        st.caption("Rows: decoder positions (the queries). Left: every cell above the diagonal is exactly 0, so "
                   "position t reads positions 0 … t only. Right: the keys and values come from the encoder's output "
                   "h, one column per source token; no mask, every row may read the whole source. Then 3. the "
                   "feed-forward network works on each position alone (below, stage by stage).")
    badge = st.empty()
    st.caption("transformers returns the stream entering and leaving each decoder layer and the attention weights, "
               "and the badge compares those; y⁽¹⁾, y⁽²⁾ and the FFN's parts it does not return: they are computed by "
               "the same functions as attnviz's model, and the layer's output they lead to is among what the badge "
               "compares.")

    follow_token("dec_pos", rows, min(1, T - 1), "decoder position", link_says=st.query_params.get("dec_pos"))
    ui.clamp_token_choice("dec_pos", T, "decoder position")
    pick = st.columns([2, 1])
    t = pick[0].selectbox("Decoder position t (its vector is written out below)", list(range(T)),
                          index=min(1, T - 1), key="dec_pos",
                          format_func=lambda p: f"{p}: {rows[p]}" if 0 <= p < T else str(p), **ui.BOUND)
    token_drawn("dec_pos", rows)
    first = pick[1].slider("Features drawn (at most)", 4, 64, 32, key="dec_first", **ui.BOUND)
    stages = decoder_stages(steps)
    with ui.figure("decoder_stages"):
        # plotly reads a title as HTML: "<s>" would strike the rest through
        title = f"Position {t} ({html.escape(rows[t])}) through decoder layer {layer}, stage by stage"
        plotly_chart(st, stages_heatmap([(STAGE_ROWS[s.key], s.value[t]) for s in stages], title, first),
                     width="stretch", key="dec_stages")
        st.caption(f"One row per stage, top to bottom in the order they run; rows starting with + are what a "
                   f"sub-layer adds to the stream. Red positive, blue negative, one colour scale for every row. "
                   f"The hidden layer a has {F} features; every other row {C}.")

    ui.table(st, [{"stage": name, "shape": shape, "what it is": what} for name, shape, what in (
        ("y (entering)", f"{T} × {C}", "T_dec positions × d_model"),
        ("h (encoder output)", f"{S} × {C}", "T_enc source tokens × d_model: the keys' and values' input"),
        ("self-attention weights", f"{steps.self_weights.shape[0]} × {T} × {T}", "heads × T_dec × T_dec, causal"),
        ("y⁽¹⁾", f"{T} × {C}", "after residual + LayerNorm 1"),
        ("cross-attention weights", f"{steps.cross_weights.shape[0]} × {T} × {S}", "heads × T_dec × T_enc"),
        ("y⁽²⁾", f"{T} × {C}", "after residual + LayerNorm 2"),
        ("FFN hidden a", f"{T} × {F}", "d_ff features per position"),
        ("y_out", f"{T} × {C}", "after residual + LayerNorm 3: the layer's output"))], hide_index=True)

    for number, stage in enumerate(stages, start=1):
        st.subheader(f"{number}. {stage.title}", divider="gray")
        st.markdown(stage.note)
        equation = stage.equation.replace("@", str(t))
        st.latex(rf"\begin{{aligned}} &{equation} \\ &= {vector_numbers(stage.value[t])} \end{{aligned}}")

    def matched(truth) -> str:
        parts = ", ".join(f"{k} {v:.1e}" for k, v in truth.parts.items())
        return ("✓ matches transformers: its BART gives the same encoder output, the same stream entering and leaving "
                f"decoder layer {layer} (hidden states) and the same self- and cross-attention weights (largest "
                f"difference per part, for a hidden state divided by its largest entry: {parts}; tolerance 1e-5).")

    ui.truth_badge(badge, lambda: _truth(view.device, source, target, layer), matched)
ui.mark_drawn(view)
