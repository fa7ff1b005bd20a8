"""The one shape of a page: `view = open_page(...)` draws the title, the shared sidebar and what the state must
tell, and returns the page's ViewState; the page draws from it; `mark_drawn(view)` ends the run.

Each page draws the sidebar itself (not app.py) because Streamlit's AppTest loses widgets drawn by the
entrypoint when it reruns under st.navigation; ui/across_pages.py carries their values from page to page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext

import streamlit as st

from attnviz.draw.describe import mask_button_name
from ui import pickers
from ui.across_pages import remember
from ui.focus import focus_style
from ui.lecture.bar import draw_bar
from ui.lecture.gate import asks_first, is_revealed, predict_first_gate
from ui.lecture.question import Subject
from ui.link_read import read_by_the_page
from ui.present import page_style, presentation_toggle
from ui.state import LessonModel, ViewState, mark_drawn, rerun_parts, view_state  # noqa: F401  (a page's API)

SHARED_SETTINGS = ("text", "model", "mask", "scale")  # the settings every page may share (open_page's settings=)
NAMES = {"text": "Text", "model": "Model", "mask": "Mask", "scale": "scaling"}
IN_ROW = "_attnviz_settings_in_row"  # the shared settings this run drew in the row above the page


def open_page(title: str, caption: str = "", *, waits_for_text: str | None = None, layer_heads: str = "",
              scale_parts: list[str] | None = None, lesson: LessonModel | None = None,
              settings: tuple[str, ...] = SHARED_SETTINGS, intro: Callable[[], None] | None = None,
              subject: Subject | Mapping[str, Subject] | None = None) -> ViewState:
    """Draw the page's title and the sidebar; return the state they hold.

    waits_for_text: "The heatmaps appear": with no usable text the page says so ("… as soon as there is text")
    and stops. layer_heads: "layer" or "layer+heads": those pickers, at the top of the page. scale_parts: the keyed fragments that
    draw everything the scale changes; the scale controls then rerun those alone (see ui.state.rerun_parts).
    lesson: what the page needs of a model, and what it shows instead (see ui.state.LessonModel).
    settings: the shared settings the page's figures depend on, of SHARED_SETTINGS ("text", "model", "mask",
    "scale"). On a projector only these sit in the row above the page (a setting the page ignores would be a
    control that does nothing); a page with a lesson's own model shows that model's name there instead of the
    picker. The others stay in the closed sidebar, still drawn so that their values carry on to the next page,
    and the sidebar says that this page does not use them.
    intro: draws a newcomer's welcome under the title (the home page's), left out on a projector and in a lecture
    (a step, a follower, a student exploring away from the room), where the class has come for the step.
    subject: what the page's lecture questions are about, when not the shared sentence: its own input (the number in
    words, the source), shown with the question before Reveal (ui/lecture/question.py); or per figure, by the id a
    step's focus names (a figure not named: the shared sentence).
    """
    lecture = draw_bar()  # a step of a lecture: its bar above the title (ui/lecture/bar.py), else nothing
    # a follower (a student's phone): the step's question and answer box come first, above the title and pickers,
    # drawn into this slot at the end (they need the page's view); the title stays small under them
    question_first = st.container() if lecture is not None and lecture.follower else None
    presenting = presentation_toggle()
    # on a projector the first screen is for the figures: the page's description waits in the title's tooltip
    if question_first is not None:
        st.markdown(f"#### {title}")
    else:
        st.title(title, help=caption if presenting and caption else None)
    page_style(presenting)
    # a lecture step's figure (fig= in the link) first on a projector (ui/focus.py); a question waiting for its Reveal
    # keeps the top of the screen until then
    focus_style(hold=asks_first(lecture) and not is_revealed(lecture))
    if intro is not None and not presenting and lecture is None and st.query_params.get("room") is None:
        intro()
    sidebar = st.sidebar
    sidebar.caption("These settings apply to every page and live in the URL: share the link to share the view.")
    rerun = dict(on_change=rerun_parts if scale_parts else None, args=(scale_parts,))
    unknown = set(settings) - set(SHARED_SETTINGS)
    if unknown:
        raise ValueError(f"open_page: unknown shared settings {sorted(unknown)}; known: {SHARED_SETTINGS}")
    st.session_state[IN_ROW] = ()
    if presenting and settings:  # on a projector the sidebar stays closed: the controls a lecturer changes live
        # sit on the page
        presenter_controls(rerun, settings, lesson)
    else:
        pickers.draw_model(sidebar)
        pickers.draw_text(sidebar)
        pickers.draw_mask(sidebar)
        pickers.draw_scale(sidebar, **rerun)
    unused = [NAMES[name] for name in SHARED_SETTINGS if name not in settings]
    if unused and settings:
        sidebar.info(f"This page does not use the {_joined(unused)} set here: "
                     f"{'they apply' if len(unused) > 1 else 'it applies'} to the other pages.", icon=":material/info:")
    elif unused:
        sidebar.info("This page does not use these settings: it has its own models and inputs.", icon=":material/info:")
    pickers.draw_examples(sidebar)
    pickers.draw_device(sidebar)
    if caption and not presenting:
        st.caption(caption)
    if layer_heads:  # in the page, beside what they drive: a lecturer changes them live, the sidebar stays closed
        model = view_state(lesson=lesson).model  # the counts the pickers offer (a cached model: no load)
        where = st.columns([1, 3, 2] if layer_heads == "layer+heads" else [1, 5], vertical_alignment="bottom")
        pickers.draw_layer_and_heads(model.n_layers, model.n_heads, where=where[:2], heads=layer_heads == "layer+heads")
    view = view_state(lesson=lesson)
    remember()  # the shared settings, for the next page (ui/across_pages.py)
    if "model" in settings:  # a page that never runs the shared model has nothing to say about it
        tell(view, presenting)
    if waits_for_text:
        require_text(view, waits_for_text)
    with question_first if question_first is not None else nullcontext():
        # a predict-first step not yet revealed stops here, before the figures
        if isinstance(subject, Mapping):
            subject = subject.get(lecture.step.focus) if lecture is not None else None
        predict_first_gate(lecture, view, subject, view.text if "text" in settings else "")
    return view


def require_text(view: ViewState, what: str) -> None:
    """With no usable text, say so ("{what} as soon as there is text") and stop the page here."""
    if view.text_problem:
        st.warning(f"{view.text_problem} {what} as soon as there is text.", icon=":material/edit:")
        st.stop()


def presenter_controls(rerun: dict, settings: tuple[str, ...] = SHARED_SETTINGS,
                       lesson: LessonModel | None = None) -> None:
    """The shared settings the page uses (text, model, mask, scaling) in one row above the page: the same widgets
    as the sidebar's, so their values carry over both ways. Those it does not use go to the closed sidebar.

    Every label in the row names what the page computes with, on the first frame too: the mask button is drawn
    before its picker (the picker sits inside it), so its label is resolved the way the picker will resolve it
    (this session's value, else the link's); should the picker end on another value (a link's value it does
    not offer), the page is drawn once more at once.
    """
    own_model = lesson_model_name(lesson) if "model" in settings else None
    in_row = [name for name in SHARED_SETTINGS if name in settings]
    # room for "Mask: built-in causal" on one line, and for the longest model name (all-MiniLM-L6-v2) uncut at 1024 px
    widths = {"text": 3.4, "model": 2.3, "mask": 2.5, "scale": 2.6}
    row = dict(zip(in_row, st.container(key="presenter_controls").columns(
        [widths[name] for name in in_row], vertical_alignment="bottom"), strict=True))
    st.session_state[IN_ROW] = tuple(name for name in row if not (name == "model" and own_model))
    sidebar = st.sidebar
    pickers.draw_text(row.get("text", sidebar), **({"height": 68} if "text" in row else {}))
    if "model" in row and own_model is None:
        pickers.draw_model(row["model"], describe=False)
    else:
        pickers.draw_model(sidebar)
        if "model" in row:  # the lesson's own model: its name, where the picker would be (the picker cannot change it)
            row["model"].markdown(f"**Model:** {own_model}",
                                  help="This page's own model: the model picked in the sidebar cannot teach it.")
    shown_mask = None
    if "mask" in row:
        shown_mask = mask_label(st.session_state, lesson, first_frame=True)
        pickers.draw_mask(row["mask"].popover(shown_mask, width="stretch"))
    else:
        pickers.draw_mask(sidebar)
    if "scale" in row:
        pickers.draw_scale(row["scale"], factor_box=sidebar, **rerun)
        factor = float(st.session_state.get("factor") or 0.0)
        if factor > 0:  # the switch above is not what the scores use: the factor (in the closed sidebar) is
            row["scale"].caption(f"Scores × {factor:g}: your own factor, not the switch")
    else:
        pickers.draw_scale(sidebar, **rerun)
    if shown_mask is not None and shown_mask != mask_label(st.session_state, lesson):
        st.rerun()  # the picker resolved the link otherwise than its button says: draw the page again


def lesson_model_name(lesson: LessonModel | None) -> str | None:
    """The name of the lesson's own model when it replaces the picked one (the picker drawn or not yet: a bound
    picker not drawn yet in this session takes the link's value), else None."""
    if lesson is None:
        return None
    view = view_state(lesson=lesson, state=FirstFrame())
    return view.model.name if view.model_spec != pickers.read_model(FirstFrame())[1] else None


def mask_label(state, lesson: LessonModel | None = None, first_frame: bool = False) -> str:
    """'Mask: …' for the mask the page's run applies (ui.state's mask_spec), on the page's own model (a decoder
    names its built-in causal mask). first_frame: the mask pickers may not be drawn yet: their link values count."""
    view = view_state(lesson=lesson, state=FirstFrame() if first_frame else state)
    model = view.model
    if lesson is not None and lesson.mask_words is not None:  # the page applies the mask its own way: it says how
        return "Mask: " + lesson.mask_words(model, view.mask_choice, FirstFrame() if first_frame else state)
    return "Mask: " + mask_button_name(view.mask_spec, bool(model.cfg.causal), model.cfg.shared_window)


class FirstFrame:
    """Session state, and for a key it does not hold yet, the link's value: what a bound widget not drawn yet in
    this session will take (its link value, or its default when the link has none)."""

    def get(self, key, default=None):
        if key in st.session_state:
            return st.session_state[key]
        raw = st.query_params.get(key)
        return default if raw is None else raw


def setting_place(name: str, word: str | None = None) -> str:
    """Where a shared setting is changed, for a sentence: "the sidebar's scaling", or on a projector, where it sits
    in the row above the page, "the scaling at the top of the page". name: of SHARED_SETTINGS; word: how the
    sentence calls it (default NAMES[name])."""
    word = word or NAMES[name]
    return f"the {word} at the top of the page" if name in st.session_state.get(IN_ROW, ()) else f"the sidebar's {word}"


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def layer_and_head(head_key: str, waits_for_text: str, where=None) -> tuple[ViewState, int]:
    """A Layer picker and a Head picker side by side in the page (where: two containers, else a new row), and the
    state resolved again with the layer they set -> (view, head). With no usable text the page says so and stops."""
    model = view_state().model
    layer_at, head_at = where if where is not None else st.columns(3)[:2]
    pickers.draw_layer_and_heads(model.n_layers, model.n_heads, where=(layer_at, None), heads=False)
    head = head_at.selectbox("Head", list(range(model.n_heads)), key=head_key, **pickers.BOUND)
    view = view_state()
    require_text(view, waits_for_text)
    return view, int(head)


def tell(view: ViewState, presenting: bool = False) -> None:
    """What the state must say: a model that could not be loaded, a lesson's own model, a mask that did not fit.
    On a projector a lesson's own model is one line of small type: a blue box would take the figures' first screen."""
    for icon, note in view.notes:
        if icon == ":material/warning:":
            st.error(note, icon=icon)
        elif presenting:
            st.caption(f"{icon} {note}")
        else:
            st.info(note, icon=icon)


def run_notes(res, who: str = "") -> None:
    """What the run itself reports (a text cut to the model's maximum length)."""
    for note in res.notes:
        st.info(f"{who}{note}", icon=":material/content_cut:")


def clamp_token_choice(key: str, n: int, what: str = "") -> None:
    """A token index left over from a longer text is moved to the last token, and the user is told."""
    stored = st.session_state.get(key)
    if isinstance(stored, int) and not 0 <= stored < n:
        st.session_state[key] = n - 1
        name = f"The {what} token" if what else "Token"
        st.warning(f"{name} {stored} does not exist in this text of {n} tokens (0 to {n - 1}): showing the last "
                   f"token, {n - 1}, instead.", icon=":material/undo:")


def seed_from_url(key: str, parse) -> dict:
    """Keyword arguments for a bound widget whose URL spelling Streamlit may not recognise.

    On a first visit, when the link's value for `key` parses (parse(raw) -> a value, or None) the widget's
    state is seeded with it, and no `value=` must be passed (Streamlit warns when both are given).
    Returns {} then, else {"value": None} meaning: pass your own default.
    """
    raw = st.query_params.get(key)
    if key not in st.session_state and raw is not None:
        value = parse(raw)
        if value is not None:
            st.session_state[key] = value
            read_by_the_page(key)
            return {}
    return {"value": None}


def seed_choice_from_url(key: str, options: list, default) -> None:
    """A picker kept in the link by its value, not by bind= (which writes the option's formatted label, "b · many
    queries", where a lecture plan links al_step=b): on a first visit its state is the option the link names
    (compared as text), else `default`. After drawing the picker, keep_in_link writes its value back."""
    if key not in st.session_state:
        raw = st.query_params.get(key)
        named = [option for option in options if str(option) == raw]
        st.session_state[key] = named[0] if named else default
        if named:
            read_by_the_page(key)


def keep_in_link(url_key: str, value: int | str | None) -> None:
    """A picker's value in the address bar as text (None: the key is dropped), remembered as written, so that
    ui.token_link.settle_token tells a new link from the one written here."""
    shown = None if value is None else str(value)
    st.session_state[f"_seen_{url_key}"] = shown
    if shown is None:
        if url_key in st.query_params:
            del st.query_params[url_key]
    elif st.query_params.get(url_key) != shown:
        st.query_params[url_key] = shown
