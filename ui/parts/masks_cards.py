"""The three parts of the masks lab: the gallery (with the cost chart), the padding demo, the mask editor.

Widgets and layout only; masks, counts and figures come from attnviz.lessons.masks.gallery / mask_editor.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import streamlit as st

import ui
from attnviz.draw.describe import describe_mask
from attnviz.engine.mask_kinds import MASKS
from attnviz.errors import AttnvizError
from attnviz.lessons.masks.editor import (
    MAX_EDITOR_TOKENS,
    forbidden_rows,
    frame_to_mask,
    mask_to_frame,
    mask_to_spec,
    position_names,
    starting_mask,
)
from attnviz.lessons.masks.gallery import (
    additive_matrix,
    attended_pairs,
    attended_pairs_chart,
    attended_pairs_curves,
    cost_grid,
    cost_lesson,
    gallery_specs,
    pad_column_weight,
    real_rows_difference,
)
from ui.heatmap_widget import heatmap, heatmap_bytes, heatmap_row
from ui.memo import shared
from ui.present import table_height
from ui.runs import model_for, run_for

PAD_DEFAULTS = ("The cat sat.", "The quick brown fox jumps over the lazy dog by the river bank.")


@shared(max_entries=16)
def cached_batch(spec: str, device: str, texts: tuple[str, ...], scale):
    return model_for(spec, device).run_batch(list(texts), scale=scale)


@dataclass
class Runner:
    """The model and sidebar choices every part runs with; masks vary, the rest stays."""

    view: ui.ViewState
    head: int

    @property
    def model(self):
        return self.view.model

    @property
    def layer(self) -> int:
        return self.view.layer

    def run(self, mask_spec: str, keep: bool = False):
        """The text with this mask, through the layers below the one shown (none above it can change it) and
        that layer's attention weights (without keep, not its feed-forward: over half a layer's work at 512
        tokens). At layer 0 of six, about a tenth of a full run, for each of the gallery's eight masks."""
        v = self.view
        return run_for(v.model_spec, v.device, v.text, mask_spec, v.scale, keep, self.layer + 1, not keep)

    def batch(self, texts: list[str]):
        return cached_batch(self.view.model_spec, self.view.device, tuple(texts), self.view.scale)

    def pattern(self, attentions):
        return attentions[self.layer, self.head]  # (n, n)


def mask_and_weights(key: str, mask, pattern, labels: list[str], head: str) -> list[bytes]:
    """M (0 / −∞, as the softmax adds it) beside the weights it produces: the payloads of one heatmap_row
    (drawn under key), heatmaps key_mask and key_weights."""
    n = len(labels)
    return [
        heatmap_bytes(additive_matrix(mask, n), labels, labels, key=f"{key}_mask", kind="mask", x_title="key",
                      title="M · 0 may look, −∞ forbidden"),
        # above 128 tokens a card's weights travel as uint8 (2 decimals in hover): 8 cards of 512² add up
        heatmap_bytes(pattern, labels, key=f"{key}_weights", title=f"weights, {head}", show_values=False,
                      bytes_per_cell=1 if n > 128 else None)]


def _pairs_line(pairs: int, n: int) -> str:
    return f"**{pairs:,}** of n² = {n}² = {n * n:,} pairs scored ({100 * pairs / (n * n):.0f}%)"


# ---- (a) the gallery -------------------------------------------------------------------------------


def gallery_card(run: Runner, kind: str, spec: str, n: int) -> tuple[str, str, list[bytes]]:
    """One card of the gallery: its heading, what the mask does, and the payloads of M beside its weights."""
    res = run.run(spec)
    m = len(res.tokens)
    shown = spec if MASKS[kind].readable_spec else f"{kind}, {n}×{n}"  # a whole matrix is too long to read
    heading = f"**{MASKS[kind].title}** · `{shown}` · {_pairs_line(attended_pairs(res.mask, m), m)}"
    return heading, describe_mask(spec, causal_model=run.model.cfg.causal), mask_and_weights(
        f"masks_gallery_{kind}", res.mask, run.pattern(res.attentions), res.labels, f"L{run.layer} H{run.head}")


def gallery(run: Runner, n: int, custom_spec: str | None) -> None:
    row = st.columns([1, 1, 1, 1, 1.3])
    window = row[0].slider("Window w", 0, 8, 2, key="masks_window", help="sliding window, global + local", **ui.BOUND)
    stride = row[1].slider("Stride s", 2, 8, 3, key="masks_stride", **ui.BOUND)
    n_pad = row[2].slider("[PAD] tokens", 1, 8, 2, key="masks_pad", help="padding mask", **ui.BOUND)
    keep = row[3].slider("Keep probability", 0.05, 1.0, 0.3, 0.05, key="masks_keep", help="random mask", **ui.BOUND)
    log_axes = row[4].radio("Cost chart axes", ["linear", "log-log"], key="masks_axes", horizontal=True,
                            **ui.BOUND) == "log-log"
    if custom_spec is None:
        sidebar = run.view.mask_choice if run.view.mask_choice.startswith("custom:") else None
        custom_spec = mask_to_spec(starting_mask(sidebar, n)[0])
    specs = gallery_specs(window=window, stride=stride, n_pad=n_pad, keep=round(keep, 2), custom=custom_spec)
    st.caption(f"Left of each card: the mask M (global + local uses token 0 as the global token; random is seeded "
               f"with 0; custom is the mask drawn in (c) below). Right: layer {run.layer}, head {run.head} of "
               f"{run.model.name} with that mask applied in every layer.")
    # every card made first (its runs and its heatmaps' bytes), then every card sent: the browser draws them in one
    # go, instead of laying the page out again for each card while the server makes the next one
    cards = {}
    with st.spinner("Running the text with every mask…"):
        for kind, spec in specs.items():
            try:
                cards[kind] = gallery_card(run, kind, spec, n)
            except Exception as err:  # reported on its own card, by that card's guard
                cards[kind] = err
    for kind, card in cards.items():  # one card per row: M and its weights each get half the page, readable
        with ui.figure(f"{kind}_card", border=True), ui.guard(f"The {kind} card"):
            if isinstance(card, Exception):
                raise card
            heading, description, payloads = card
            st.markdown(heading)
            st.caption(description)
            heatmap_row(f"masks_gallery_{kind}", payloads)

    st.subheader("The O(n²) lesson: pairs scored as the text grows")
    ns = cost_grid(n)  # n = 8..512 and the text's own n
    curves = attended_pairs_curves(ns, window=window, stride=stride, n_pad=n_pad, keep=round(keep, 2))
    # an SVG: st.html's sanitiser drops SVG, markdown's raw HTML keeps it (every text in it is escaped)
    st.markdown(attended_pairs_chart(ns, curves, current_n=n, log_axes=log_axes), unsafe_allow_html=True)
    st.markdown(cost_lesson(512, window))
    st.page_link("app_pages/efficient.py", label="Efficient attention: sparse kernels that really skip the work, "
                 "measured", icon=":material/speed:")
    st.caption("Random is drawn at its expected value p·n² + (1 − p)·n (its diagonal is always kept); padding keeps "
               "the slider's number of [PAD] tokens at every n.")


# ---- (b) padding in a batch ----------------------------------------------------------------------------


def padding_demo(run: Runner) -> None:
    st.markdown("A batch is a rectangle: to run sentences of different lengths together, the shorter ones are "
                "filled up with **[PAD]** tokens. The padding mask sets M = −∞ in every [PAD] *key* column, so "
                "e^−∞ = 0 and no real token takes anything from the fillers.")
    st.latex(r"M_{ij} = \begin{cases} 0 & \text{key } j \text{ is a real token} \\ -\infty & \text{key } j "
             r"\text{ is [PAD]} \end{cases} \qquad a_{ij} = \frac{e^{s_{ij} + M_{ij}}}{\sum_k e^{s_{ik} + M_{ik}}}")
    inputs = st.columns(2)
    texts = [inputs[0].text_input("Sentence 1", PAD_DEFAULTS[0], key="masks_pad_a", **ui.BOUND),
             inputs[1].text_input("Sentence 2", PAD_DEFAULTS[1], key="masks_pad_b", **ui.BOUND)]
    try:
        encs, weights = run.batch(texts)  # weights (B, L, nh, T, T)
    except AttnvizError as err:
        st.warning(f"{err} Type a sentence in both boxes to batch them.", icon=":material/edit:")
        return
    cols = st.columns(2, gap="large")
    for i, (enc, text, col) in enumerate(zip(encs, texts, cols, strict=True)):
        pattern = run.pattern(weights[i])  # (T, T)
        alone = run.pattern(run_for(run.view.model_spec, run.view.device, text, "none", run.view.scale).attentions)
        with col:
            title = f"sentence {i + 1} in the batch: layer {run.layer}, head {run.head}"
            heatmap(pattern, enc.labels, key=f"masks_pad_heatmap_{i}", title=title, show_values=False)
            if enc.n_pad:
                st.markdown(f"{enc.n_pad} [PAD] token(s) added. Largest weight any query puts on a [PAD] key: "
                            f"**{pad_column_weight(pattern, enc.n_pad):g}** (exactly zero). The real tokens' "
                            f"weights equal those of the sentence run alone: max |Δ| = "
                            f"{real_rows_difference(pattern, alone):.1e}.")
            else:
                st.markdown("The longest sentence: no [PAD] needed, so nothing is masked.")
    st.caption("The [PAD] *rows* are not empty: a [PAD] query still looks at the real tokens. Its output is "
               "computed and then thrown away, because nobody reads it.")


# ---- (c) the custom mask editor ------------------------------------------------------------------------


def _reset_editor() -> None:
    st.session_state["_masks_editor_nonce"] = st.session_state.get("_masks_editor_nonce", 0) + 1


def _use_in_sidebar(spec: str) -> None:
    st.session_state["mask"] = "custom"
    st.session_state["custom"] = spec[len("custom:"):]


def custom_editor(run: Runner, labels: list[str]) -> str | None:
    """Draw the grid, run the model with it -> its 'custom:' spec (None when the text is too long to draw)."""
    n = len(labels)
    sidebar = run.view.mask_choice if run.view.mask_choice.startswith("custom:") else None
    start, problem = starting_mask(sidebar, n)
    if problem:
        st.error(f"The sidebar's custom mask (typed in, or from the link) does not fit this text: {problem}",
                 icon=":material/square_foot:")
    if n > MAX_EDITOR_TOKENS:
        st.info(f"The editor draws at most {MAX_EDITOR_TOKENS} tokens as checkboxes, and this text has {n}. "
                "Shorten the text to draw a mask by hand.", icon=":material/content_cut:")
        return None
    st.markdown("Each row is a query, each column a key: **ticked = may look**. The grid starts from the "
                "sidebar's custom mask, or from the causal pattern. Untick a whole row to see what happens to a "
                "query that may look at nothing.")
    names = position_names(labels)
    digest = zlib.crc32(("|".join(names) + mask_to_spec(start)).encode())
    frame = mask_to_frame(start, labels)
    # each column as wide as its token (about 8 px a character, the header's edit icon and padding): 48 px cut "[CLS]"
    config = {name: st.column_config.CheckboxColumn(label, help=f"key {name}", width=max(48, 8 * len(label) + 44),
                                                    alignment="center")
              for name, label in zip(frame.columns, labels, strict=True)}
    edited = st.data_editor(frame, key=f"masks_editor_{digest:x}_{st.session_state.get('_masks_editor_nonce', 0)}",
                            column_config=config, height=table_height(n))
    result_col, side_col = st.columns([3, 2], gap="large")
    with side_col:
        empty_rows = st.multiselect("Forbid every key for these queries", list(range(n)), key="masks_dead_rows",
                                    format_func=lambda i: names[i], help="A quick way to untick whole rows.",
                                    **ui.BOUND)
        mask = frame_to_mask(edited)
        mask[[i for i in empty_rows if i < n], :] = False  # (n, n): whole rows forbidden
        spec = mask_to_spec(mask)
        res = run.run(spec, keep=True)
        st.markdown(_pairs_line(attended_pairs(res.mask, n), n))
        dead = forbidden_rows(res.mask)
        if dead:
            outputs = res.traces[run.layer].head_outputs[0, run.head]  # (n, d_head): this head's output per query
            norms = ", ".join(f"{names[i]} (‖output‖ = {float(outputs[i].norm()):.3f})" for i in dead)
            st.warning(f"Query row(s) {norms} forbid every key. The softmax of a row that is −∞ everywhere is "
                       "0/0, which has no value. attnviz's policy (the same as PyTorch's SDPA) is to give such a "
                       "query zero weights and a zero output, so it shows as an empty row: it simply gathers "
                       "nothing in this layer.", icon=":material/block:")
        st.button("Reset the grid", key="masks_editor_reset", on_click=_reset_editor)
        st.button("Use in the sidebar", key="masks_editor_use", on_click=_use_in_sidebar, args=(spec,),
                          help="Sets the sidebar's mask to custom with these rows, for every page.")
        st.caption("As a mask spec (paste it into the sidebar's custom mask, or share the link):")
        st.code(spec, language=None, wrap_lines=True)
    with result_col:
        st.markdown(f"**Your mask**, applied in every layer: layer {run.layer}, head {run.head}")
        heatmap_row("masks_custom_result", mask_and_weights("masks_custom_result", res.mask,
                                                            run.pattern(res.attentions), res.labels, f"L{run.layer} H{run.head}"))
    return spec
