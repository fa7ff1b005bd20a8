"""The one shape of a page: `view = open_page(...)` draws the title, the shared sidebar and what the state must
tell, and returns the page's ViewState; the page draws from it; `mark_drawn(view)` ends the run.

Each page draws the sidebar itself (not app.py) because Streamlit's AppTest loses widgets drawn by the
entrypoint when it reruns under st.navigation; ui/across_pages.py carries their values from page to page.
"""

from __future__ import annotations

import streamlit as st

from ui import pickers
from ui.across_pages import remember
from ui.focus import focus_style
from ui.lecture.bar import draw_bar, predict_first_gate
from ui.present import page_style, presentation_toggle
from ui.state import LessonModel, ViewState, mark_drawn, rerun_parts, view_state  # noqa: F401  (a page's API)


def open_page(title: str, caption: str = "", *, waits_for_text: str | None = None, layer_heads: str = "",
              scale_parts: list[str] | None = None, lesson: LessonModel | None = None,
              uses_shared_settings: bool = True) -> ViewState:
    """Draw the page's title and the sidebar; return the state they hold.

    waits_for_text: "The heatmaps appear": with no usable text the page says so ("… as soon as there is text")
    and stops. layer_heads: "layer" or "layer+heads": those pickers, at the top of the page. scale_parts: the keyed fragments that
    draw everything the scale changes; the scale controls then rerun those alone (see ui.state.rerun_parts).
    lesson: what the page needs of a model, and what it shows instead (see ui.state.LessonModel).
    uses_shared_settings: False for a page whose figures do not depend on the shared sentence, model, mask or
    scale (its own models and inputs): on a projector their row would only push the figures down, so they stay
    in the closed sidebar, still drawn so that their values carry on to the next page.
    """
    lecture = draw_bar()  # a step of a lecture: its bar above the title (ui/lecture/bar.py), else nothing
    presenting = presentation_toggle()
    # on a projector the first screen is for the figures: the page's description waits in the title's tooltip
    st.title(title, help=caption if presenting and caption else None)
    page_style(presenting)
    focus_style()  # a lecture step's figure (fig= in the link) first on a projector (ui/focus.py)
    sidebar = st.sidebar
    sidebar.caption("These settings apply to every page and live in the URL: share the link to share the view.")
    rerun = dict(on_change=rerun_parts if scale_parts else None, args=(scale_parts,))
    if presenting and uses_shared_settings:  # on a projector the sidebar stays closed: the controls a lecturer
        # changes live sit on the page
        presenter_controls(rerun)
    else:
        pickers.draw_model(sidebar)
        pickers.draw_text(sidebar)
        pickers.draw_mask(sidebar)
        pickers.draw_scale(sidebar, **rerun)
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
    if uses_shared_settings:  # a page that never runs the shared model has nothing to say about it
        tell(view, presenting)
    if waits_for_text:
        require_text(view, waits_for_text)
    predict_first_gate(lecture)  # a predict-first step not yet revealed stops here, before the page's figures
    return view


def require_text(view: ViewState, what: str) -> None:
    """With no usable text, say so ("{what} as soon as there is text") and stop the page here."""
    if view.text_problem:
        st.warning(f"{view.text_problem} {what} as soon as there is text.", icon=":material/edit:")
        st.stop()


def presenter_controls(rerun: dict) -> None:
    """Sentence, model, mask and scaling in one row above the page (the same widgets as the sidebar's: their
    values carry over both ways)."""
    from attnviz.engine.mask_kinds import MASKS

    row = st.container(key="presenter_controls").columns([4.2, 2.2, 2, 2.6], vertical_alignment="bottom")
    pickers.draw_text(row[0], height=68)
    pickers.draw_model(row[1], describe=False)
    kind = MASKS.get(st.session_state.get("mask") or "none", MASKS["none"])
    pickers.draw_mask(row[2].popover(f"Mask: {kind.title}", width="stretch"))
    pickers.draw_scale(row[3], factor_box=st.sidebar, **rerun)


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
            return {}
    return {"value": None}


def seed_choice_from_url(key: str, options: list, default) -> None:
    """A picker kept in the link by its value, not by bind= (which writes the option's formatted label, "b · many
    queries", where a lecture plan links al_step=b): on a first visit its state is the option the link names
    (compared as text), else `default`. After drawing the picker, keep_in_link writes its value back."""
    if key not in st.session_state:
        raw = st.query_params.get(key)
        st.session_state[key] = next((option for option in options if str(option) == raw), default)


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
