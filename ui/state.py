"""The view state: everything that decides what a page draws, resolved in one place from the widgets' live values.

Why one function for full runs and part reruns alike: a part of a page that Streamlit reruns alone (an
st.fragment) is called with the arguments of the run that first drew it. Had it taken the state as an
argument, a new sentence typed just before a click on the scaling switch would be dropped: the part would
draw the old sentence with the new scale. So every part resolves the state at its own start, from session
state, where the widgets' values always are the live ones.

And why a part's own rerun is not always enough: a callback that asks for only some parts to rerun
(`rerun_parts`) checks first that nothing else changed since the page was last drawn whole; if something did
(two quick changes in one rerun), the whole page reruns instead.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import streamlit as st

from attnviz.engine.mask_kinds import padding_count, parse_mask
from attnviz.engine.models.catalog import spec_of
from attnviz.errors import AttnvizError
from ui import access, pickers, runs, streamlit_private
from ui.across_pages import remember
from ui.focus import panel_left_out
from ui.memo import shared

DRAWN = "_attnviz_drawn_view"  # the state the whole page was last drawn with (mark_drawn)
SELECTION = "why_sel"  # the explorer's selected cell (attnviz.lessons.explorer.selection.Selection)


@dataclass(frozen=True)
class ViewState:
    """What the page shows. Built by view_state(); never changed (dataclasses.replace makes a variant)."""

    model_choice: str  # the picker's choice ("tiny-llama", "other", ...)
    model_spec: str  # the model shown: the choice's spec, or another that can teach this page (see notes)
    text: str
    mask_choice: str  # the mask the picker asks for ("custom:" included)
    mask_spec: str  # the mask applied to this text (an empty custom mask = the causal pattern; "none" if it did not fit)
    scale: bool | float  # True = 1/√d_k, False = ×1, a float = that factor
    device: str
    layer: int = 0
    heads: tuple[int, ...] = ()
    selection: object | None = None
    notes: tuple[tuple[str, str], ...] = ()  # (icon, message): what the page must tell about the state
    text_problem: str | None = None  # why this text cannot be run (empty, nothing to attend to)

    @property
    def model(self):
        return runs.model_for(self.model_spec, self.device)

    def run(self, *, keep: bool = False, scale=None, layers: int | None = None, weights_only: bool = False):
        """This state's run (shared: fetched, not recomputed, after its first time)."""
        return runs.run_for(self.model_spec, self.device, self.text, self.mask_spec,
                            self.scale if scale is None else scale, keep, layers, weights_only)

    def layer_run(self, scale=None):
        """A run that holds this state's layer and those below it (ui.runs.run_through): for a page that draws one
        layer; its attentions may stop there."""
        return runs.run_through(self.model_spec, self.device, self.text, self.mask_spec,
                                self.scale if scale is None else scale, self.layer)


@dataclass(frozen=True)
class LessonModel:
    """What a page needs of a model, and the model to show when the sidebar's cannot teach it."""

    fits: object  # fits(model) -> True when the model can teach the page
    fallback: str  # the spec shown otherwise
    why: str  # "{model} …": why the sidebar's model cannot teach the page
    # mask_words(model, mask_choice, state) -> the mask button's words, for a page that applies the shared mask its
    # own way (Cross-attention: to the decoder's self-attention alone, over its built-in causal mask); None: as a run
    mask_words: object = None


def view_state(prefix: str = "", lesson: LessonModel | None = None, state=None) -> ViewState:
    """The state the widgets hold now (prefix: another set of pickers, e.g. Compare's side B). state: where the
    widgets' values are read (default: session state; ui.page.FirstFrame adds a link's values for pickers not
    drawn yet)."""
    state = st.session_state if state is None else state
    choice, spec = pickers.read_model(state, prefix)
    device = pickers.read_device(state)
    notes: list[tuple[str, str]] = []
    # what a link or a stale state asks for, though the picker does not offer it to this browser
    refusal = access.model_refusal(choice) or access.link_refusal(prefix)
    model, error = (None, refusal) if refusal else runs.model_or_error(spec, device)
    if model is None:
        first = access.offered_models()[0]
        shown = "the bundled " + first if spec_of(first) == "" else first
        notes.append((":material/warning:", f"{error} Showing {shown} instead."))
        spec = spec_of(first)
        model = runs.model_for(spec, device)
    if lesson is not None and not lesson.fits(model):
        notes.append((":material/swap_horiz:", lesson.why.format(model=model.name)))
        spec, model = lesson.fallback, runs.model_for(lesson.fallback, device)
    text = pickers.read_text(state, prefix)
    mask_choice = pickers.read_mask(state, prefix)
    mask_spec, mask_note, text_problem = applied_mask(spec, device, text, mask_choice, access.server_settings().max_tokens)
    if mask_note:
        notes.append((":material/warning:", mask_note))
    layer, heads = (0, ()) if prefix else pickers.read_layer_and_heads(state, model.n_layers, model.n_heads)
    return ViewState(choice, spec, text, mask_choice, mask_spec, pickers.read_scale(state, prefix), device, layer,
                     heads, None if prefix else state.get(SELECTION), tuple(notes), text_problem)


@shared(max_entries=64)
def applied_mask(spec: str, device: str, text: str, mask_choice: str, max_tokens: int) -> tuple[str, str | None, str | None]:
    """(the mask spec applied to this text, why it differs from the one asked for, why the text cannot run: empty,
    or longer than this server's cap of max_tokens, whose n × n matrices per head it keeps small).
    Kept per text and mask: every part of a page resolves the state, and tokenizing 512 tokens and building a
    512 × 512 mask to check it took 10 ms each time."""
    try:
        n = len(runs.model_for(spec, device).encode(text).ids)
    except AttnvizError as err:
        return mask_choice, None, str(err)
    if n > max_tokens:
        return mask_choice, None, f"This text has {n} tokens; this server runs texts of at most {max_tokens}. Shorten it."
    try:
        n += padding_count(mask_choice)
        mask_spec = causal_custom_mask(mask_choice, n)
        parse_mask(mask_spec, n)
    except AttnvizError as err:
        return "none", f"Mask: {err} Showing no mask instead.", None
    return mask_spec, None, None


def causal_custom_mask(spec: str, n: int) -> str:
    """An empty custom mask means 'start from the causal pattern' for the current number of tokens."""
    if spec != "custom:":
        return spec
    return "custom:" + "/".join("1" * (i + 1) + "0" * (n - i - 1) for i in range(n))


# ---- which parts rerun ----------------------------------------------------------------------------------------


def mark_drawn(view: ViewState, lesson: LessonModel | None = None) -> None:
    """The page has been drawn whole with this state (the last line of a page's full run, or of the part that
    holds everything the state draws)."""
    st.session_state[DRAWN] = (view, lesson)
    remember()  # pickers drawn inside the page (the explorer's Layer and Heads) are drawn by now
    panel_left_out()  # a lecture's class answers waiting for a figure the page did not draw (ui/focus.py)


def rerun_parts(parts: list[str], changes: tuple[str, ...] = ("scale",)) -> None:
    """From a widget callback: rerun only these keyed fragments, when the only difference between the state now
    and the one the page was last drawn with is in `changes` (the fields those parts draw). Otherwise (another
    change arrived in the same rerun, e.g. a new sentence typed just before the click) the whole page reruns,
    as it does without a callback. A part the last run never drew is unknown to Streamlit: the whole page too."""
    if DRAWN not in st.session_state:
        return
    drawn, lesson = st.session_state[DRAWN]
    live = view_state(lesson=lesson)
    if dataclasses.replace(live, **{name: getattr(drawn, name) for name in changes}) != drawn:
        return
    try:
        st.rerun(parts)
    except streamlit_private.rerun_refused():
        return
