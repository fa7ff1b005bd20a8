"""The explorer (home page): every head of one layer as heatmaps; click a cell to see why it has its weight."""

import dataclasses
import html
import math
from functools import partial
from urllib.parse import urlencode

import streamlit as st

import ui
from attnviz.analysis.stats import live_rows
from attnviz.draw.describe import describe_effect, describe_layer_windows, describe_mask, describe_scale, head_facts
from attnviz.draw.export import attentions_npz, head_csv
from attnviz.draw.latex import attention_equation, mask_matrix, multi_head_equation
from attnviz.draw.text import markdown_literal
from attnviz.lessons.explorer.selection import (
    clamp_selection,
    follow_selection,
    grid_ring,
    selection_from_click,
    selection_from_params,
    text_the_link_names,
    token_choice,
)
from attnviz.lessons.explorer.truth import (
    badge_sentence,
    checked_settings,
    mask_differs,
    unchecked_sentence,
    unchecked_settings,
    unknown_pieces,
)
from attnviz.lessons.explorer.truth import unknown_note as note_for
from ui import heatmap_widget as hm
from ui.address import shared_settings_now
from ui.focus import focused
from ui.parts import explorer_why as why
from ui.parts.welcome import welcome
from ui.present import presenting
from ui.runs import truth_for
from ui.scale_swap import flipped_scale_state

# A scale toggle or a click changes only these parts: each is its own keyed fragment, rerun alone, so the
# browser re-renders the heatmaps and the arithmetic, not the controls, captions and badge around them.
SCALE_PARTS = ["explorer_grid", "explorer_why", "explorer_focus"]


def set_selection(sel) -> None:
    """The selected cell, in session state and in the URL (Step by step's own keys: a link opens it there)."""
    st.session_state[ui.state.SELECTION] = sel
    labels = st.session_state.get("why_labels")
    if sel is not None and labels:
        st.query_params.update(sel.as_params(labels))


def take_click(key: str, heads: list[int]) -> None:
    """on_select of a heatmap: its clicked {panel, row, col} becomes the selection; the parts that show it rerun."""
    click = hm.clean_selection((st.session_state.get(key) or {}).get("selection"), len(heads), 10**9, 10**9)
    sel = selection_from_click(click, heads)
    if sel is not None:
        set_selection(sel)
        ui.rerun_parts(SCALE_PARTS, changes=("scale", "selection"))


def settle_selection(n: int, n_heads: int) -> None:
    """The link's selection if it carries one, else this session's, clamped to this text with a message, into
    session state, where the view state reads it."""
    sel = selection_from_params(st.query_params) or st.session_state.get(ui.state.SELECTION)
    labels = st.session_state.get("why_labels") or []
    old = st.session_state.get("_selection_labels")  # the text the selection was made on
    earlier = st.session_state.get("_selection_texts") or []  # the texts before it, the latest first
    st.session_state["_selection_labels"] = list(labels)
    st.session_state["_selection_texts"] = [list(labels), *[t for t in earlier if t != list(labels)][:3]]
    # a late rerun (a quick second change) carries the address of an earlier text: '10: it' is of that text
    named = text_the_link_names(st.query_params, [list(labels), *([old] if old else []), *earlier])
    if named is not None and named != list(labels):
        old = named
    # the same tokens in a new text (not the same positions), unless a new link names its own cell of it
    ours = sel is not None and old and all(st.query_params.get(k) in (None, token_choice(t, old)) for k, t in
                                           (("sbs_query", sel.query), ("sbs_key", sel.key)) if t < len(old))
    if ours:
        sel, went = follow_selection(sel, old, labels)
        if went:
            st.info(went, icon=":material/swap_horiz:")
            for url_key in ("sbs_head", "sbs_query", "sbs_key"):  # nothing selected: the link names no cell
                if url_key in st.query_params:
                    del st.query_params[url_key]
    fitted, message = clamp_selection(sel, n, n_heads)
    if message:
        st.warning(message, icon=":material/undo:")
    if fitted != sel or (fitted is not None and any(st.query_params.get(k) != v for k, v in fitted.as_params(labels).items())):
        set_selection(fitted)  # also refreshes the token names in the URL after the text changed
    st.session_state[ui.state.SELECTION] = fitted


@st.fragment(key="explorer_view")
def explorer_view() -> None:
    """Everything the run draws. A layer or head change reruns only this (in a browser): the sidebar and the page
    around it are not redone; a click or the scale controls rerun only its SCALE_PARTS."""
    with ui.guard("The explorer"):  # here, not around the call: a fragment rerun runs this function alone
        model, res = current()  # the model and run, for the pickers' ranges and the selection's bounds
        above = st.container()  # the facts and the truth badge: above the heatmaps, or on a projector right below
        st.session_state["why_labels"] = list(res.labels)
        # a lecture step that focuses the enlarged head (fig=head, ui/focus.py): on a projector it comes first, at
        # the page's width, where its token labels have room; the grid and 'why this weight' follow
        head_first = focused() == "head"
        first = ui.figure("head") if head_first else None
        left, right = st.columns([3, 2], gap="medium")
        with left:
            controls = st.columns([1, 2], vertical_alignment="bottom")
            ui.pickers.draw_layer_and_heads(model.n_layers, model.n_heads, where=controls)
            st.toggle("Per-head colours", key="per_head", **ui.BOUND,
                      help="Each head's colours run from 0 to its own largest weight: for long texts, where every "
                           "weight is small and a shared 0..1 scale turns heads dark.")
            settle_selection(len(res.tokens), model.n_heads)
            view = ui.view_state()  # every control of the page drawn: the state this run draws
            facts = (f"**{model.name}** · {model.n_layers} layers × {model.n_heads} heads · "
                     f"{head_facts(model.d_model, model.n_heads, model.d_head, model.n_kv_heads)} · "
                     f"**{len(res.tokens)} tokens** · device `{model.device.type}`")
            n = len(res.tokens)
            dead = [f"{i} ({markdown_literal(res.labels[i])})"
                    for i in (~live_rows(view.layer_run().attentions[view.layer, 0])).nonzero().flatten().tolist()]
            if dead:
                st.warning(f"The mask forbids every key for query row(s) {', '.join(dead)}. Those rows get zero "
                           "weights and a zero output (the policy PyTorch's SDPA uses), shown as empty rows.",
                           icon=":material/block:")
            legend = (f"Layer {view.layer}, {len(view.heads)} head(s). Above each head (in its tooltip where the title "
                      "ends in …): H = mean row entropy in nats (0 = all weight on one key, "
                      f"ln {n} ≈ {math.log(n):.2f} = spread evenly), max = mean of each row's largest weight: "
                      "high max and low H mean a sharp, confident head.")
            if not presenting():
                st.caption(legend)
            with ui.figure("grid"):
                grid_part()
            if presenting():  # under the grid on a projector: the grid takes the first screen
                st.caption(legend)
            # under the grid, in the same column: "why this weight" beside it stays in view (it is sticky), so a
            # click on the enlarged head shows its arithmetic next to it, not a screen higher up
            with first or ui.figure("head"):
                st.subheader("One head in full detail")
                focus_part()
        with right, st.container(key="why"):
            st.subheader("Why this weight?")  # headings outside the parts: a part's rerun need not send them again
            why_part()
        # (the first screen of a 1024 × 768 projector is the heatmaps')
        where = st.container() if presenting() else above
        where.markdown(facts)
        badge = where.empty()
        truth_badge(badge, view)
        ui.mark_drawn(view)  # everything the state draws is inside this part: the page is drawn whole


def current():
    """(model, run) of the state the widgets hold now: what a part resolves at its start, never arguments
    captured by an earlier run (see ui.state). The run holds the layer shown and those below it (ui.state's
    layer_run): the page draws one layer."""
    view = ui.view_state()
    return view.model, view.layer_run()


@st.fragment(key="explorer_grid")
def grid_part() -> None:
    with ui.guard("The heatmaps"):
        view = ui.view_state()
        res = view.layer_run()
        unchecked_note(view, res)
        ring = grid_ring(view.selection, list(view.heads))
        picked = hm.layer_grid(res, view, view.layer, list(view.heads), key="grid",
                               per_head_scale=bool(st.session_state.get("per_head")), selection=ring,
                               on_select=partial(take_click, "grid", list(view.heads)),
                               other_state=flipped_scale_state(view, len(res.tokens), view.layer))
        if picked is not None and picked != ring:  # a click the callback did not see (AppTest writes the state)
            set_selection(selection_from_click(picked, list(view.heads)))


def follow_the_pair_link(pair: dict[str, str]) -> None:
    """A plain link to Step by step on this pair, with every shared setting in it: the browser loads that address, one
    entry of its history, and Back loads the explorer's own (its layer, its cell). st.switch_page (which refuses a
    bound setting in its query) and st.page_link left two or three entries, made as the new page's first run put the
    settings back into the address; Back landed on one without the layer, and Step by step drew layer 0."""
    query = {**shared_settings_now(), **pair, "sbs_focus": "pair"}  # the pair goes first there
    href = html.escape("./step_by_step?" + urlencode(query, doseq=True))
    st.html(f'<a class="attnviz-follow-pair" href="{href}" target="_self">Follow this pair step by step →</a>'
            + FOLLOW_PAIR_CSS)


FOLLOW_PAIR_CSS = """<style>
.attnviz-follow-pair { display: inline-block; padding: 0.25rem 0.75rem; border-radius: 0.5rem; text-decoration: none;
  color: inherit; border: 1px solid rgba(49, 51, 63, 0.25); }
.attnviz-follow-pair:hover, .attnviz-follow-pair:focus-visible { border-color: currentColor; text-decoration: underline; }
</style>"""


@st.fragment(key="explorer_why")
def why_part() -> None:
    with ui.guard("Why this weight"):
        view = ui.view_state()
        if view.selection is None:
            st.info("Click a cell of any heatmap (or Tab to a heatmap, move with the arrow keys and press Enter): its "
                    "query · key arithmetic, the scaling, the mask and the softmax of its row appear here.",
                    icon=":material/touch_app:")
        else:
            arithmetic, contribution = st.tabs(["The arithmetic", "Weight against contribution"], key="why_tabs")
            with arithmetic:
                why.why_this_weight(view)
            with contribution:
                why.weight_against_contribution(view)
            follow_the_pair_link(view.selection.as_params(st.session_state.get("why_labels") or []))
        # open while no cell is selected, closed once one is (the key follows that, so each state starts so);
        # filled only while open: closed, its formulas would still be typeset in the browser on every rerun
        equations = st.expander("The equations behind every heatmap", expanded=view.selection is None,
                                on_change="rerun", key=f"equations_open_{view.selection is None}")
        if equations.open:
            with equations:
                equations_panel(view)


@st.fragment(key="explorer_focus")
def focus_part() -> None:
    """The enlarged head and the downloads (of the weights at the scale shown)."""

    with ui.guard("The enlarged head"):
        view = ui.view_state()
        res, sel, layer = view.layer_run(), view.selection, view.layer
        focus = st.selectbox("Head to enlarge", view.heads, key="focus", **ui.BOUND)
        ring = {"panel": 0, "row": sel.query, "col": sel.key} if sel is not None and sel.head == focus else None
        other = flipped_scale_state(view, len(res.tokens), layer)
        settings = hm.settings_caption(view, res.scale)
        hm.heatmap(res.attentions[layer, focus], res.labels, key="focus_head", selectable=True, selection=ring,
                   title=f"layer {layer}, head {focus}: weights after softmax", caption=settings,
                   on_select=partial(take_click, "focus_head", [focus]),
                   other_state=other and dataclasses.replace(other, data=other.data.attentions[layer, focus],
                                                             caption=hm.settings_caption(view, other.data.scale)))
        # made only when clicked: the CSV of a 512-token head is 3 MB of text
        st.download_button("Download this head's weights (CSV)", lambda: head_csv(res, layer, focus, settings),
                           file_name=f"attnviz_layer{layer}_head{focus}.csv", mime="text/csv")
        st.download_button(
            "Download all layers and heads (NPZ)",
            lambda: attentions_npz(view.run(), {"model": view.model.name, "text": view.text, "mask": view.mask_spec,
                                         "scale": res.scale}),
            file_name="attnviz_attentions.npz", mime="application/octet-stream")


def equations_panel(view) -> None:
    """The attention equation with this run's d_k, the mask (described and as M), the scaling and multi-head."""
    model, res = view.model, view.layer_run()
    st.latex(attention_equation(res.scale, model.d_head, res.mask is not None))
    window = model.shared_window  # Mistral's sliding window, part of the model
    layered = describe_layer_windows(model.cfg.windows)  # Qwen2: windows from some layer on
    st.markdown(f"**Mask.** {describe_mask(view.mask_spec, causal_model=model.cfg.causal, builtin_window=window)} "
                f"{layered}")
    if res.mask is not None:
        st.latex(mask_matrix(res.mask, len(res.tokens)))
    else:
        st.latex(r"\small M = 0\ \text{everywhere (nothing is masked)}")
    st.markdown(f"**Scaling.** {describe_scale(res.scale, model.d_head, trained=model.source is not None)}")
    effect = describe_effect(view.mask_spec, res.scale, model.d_head, trained=model.source is not None)
    if effect:
        st.info(effect, icon=":material/repeat:")
    st.latex(multi_head_equation(model.n_heads, model.d_model, model.d_head))


def truth_badge(badge, view) -> None:
    """The live check against transformers, in `badge`, saying at which settings it compared. It depends on the
    text only (cached on it): a toggle never redoes it (unchecked_note, in a part a toggle reruns, says when the
    heatmaps are at other settings)."""
    checked = checked_settings(view.model.cfg.causal, view.model.d_head, view.model.shared_window)
    ui.truth_badge(badge, lambda: truth_for(view.model_spec, view.device, view.text),
                   lambda truth: badge_sentence(truth.max_abs_diff, checked))


def unchecked_note(view, res) -> None:
    """Above the heatmaps, when their mask or scale is not what the check against transformers ran at."""
    model = view.model
    if model.source is None:  # no reference at all: the badge says so
        return
    differs = mask_differs(res.mask, model.builtin_mask(len(res.tokens)))
    note = unchecked_sentence(unchecked_settings(differs, view.mask_spec, res.scale, model.d_head))
    if note:
        st.warning(note, icon=":material/science:")

def unknown_note(view) -> None:
    """A note when the tokenizer put [UNK] in place of characters its vocabulary lacks."""
    unk, pieces = unknown_pieces(view.model, view.text)
    note = note_for(view.model.name, unk, pieces, len(view.layer_run().tokens))
    if note:
        st.info(note, icon=":material/help:")


view = ui.open_page(
    "Attention explorer",
    "Each heatmap is one attention head: row = the query token that is looking, column = the key token it looks at, "
    "colour = its weight after the softmax (each row sums to 1). Hover or tap a cell for the numbers; click one to see the "
    "arithmetic behind it.", waits_for_text="The heatmaps appear", scale_parts=SCALE_PARTS, intro=welcome)
with ui.guard("The explorer"):
    ui.run_notes(view.layer_run())
    unknown_note(view)
    explorer_view()
