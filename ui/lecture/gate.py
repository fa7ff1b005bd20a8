"""A lecture step that asks first: the question before Reveal (with what it refers to, a follower's answer box, the
projector's Reveal), the page's figures held back on a predict-first step, and at Reveal the class's answers beside the
model's, at the top of the step's focus figure. Revealed is the room's (every follower's too), or this session's for a
lecture link without a room. A step that asks nothing: its explanation at the top of its focus figure, where a
follower's phone is brought.
"""

from __future__ import annotations

import contextlib
from functools import partial

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.store import StoreError
from ui.announce import announce
from ui.focus import hold_panel, no_panel, scroll_to
from ui.lecture import answers
from ui.lecture.lecture_step import LectureStep
from ui.lecture.question import Subject, question_box
from ui.lecture.step_state import asked, right_answer
from ui.lecture.store import lecture_store
from ui.present import presenting

REVEALED = "_attnviz_lecture_revealed"  # this session's revealed (plan, step) pairs, for a link without a room
# what a screen reader is told at Reveal: (predict first, the class's answers shown)
REVEALED_SAYS = {(True, True): "Revealed: the figures are on the page, and the class's answers beside the model's.",
                 (True, False): "Revealed: the figures are on the page.",
                 (False, True): "Revealed: answers are closed; the class's answers are beside the model's.",
                 (False, False): "Revealed."}


def is_revealed(at: LectureStep) -> bool:
    if at.state is not None:
        return at.number in at.state.revealed
    return (at.plan_id, at.number) in st.session_state.get(REVEALED, set())


def reveal(at: LectureStep) -> None:
    """The Reveal button: the room's step (with the presenter key), or this session's for a link without a room."""
    if at.presenter:
        try:
            lecture_store().reveal(at.room, at.key, at.number)
        except StoreError as err:
            st.session_state["_attnviz_reveal_problem"] = str(err)
        return
    st.session_state.setdefault(REVEALED, set()).add((at.plan_id, at.number))


def closed_until_reveal(at: LectureStep) -> bool:
    """The step asks the class first and is not revealed yet: its view, explored alone, would show the answer."""
    return asks_first(at) and not is_revealed(at)


def placed_panel(at: LectureStep, view, box):
    """The class's answers in the focus figure's box, drawn before the page fills it -> where the page's figure goes.
    On a projector they stand beside the figure (ui/lecture/beside.py: a table, a key token a row): above it, a chart
    pushed the figure's lower half off the screen the focus brings up (the sun's picture, the head's grid). Elsewhere
    (a phone) above it, and the gate's CSS puts them under it."""
    if presenting():
        # 260 px at 1024: a quarter (230 px) wrapped each option over 3 to 5 lines; a third (310 px) left the figures
        # too little (the Positions heatmaps thinned their labels, two charts' titles were cut)
        content, side = box.columns([2.6, 1], gap="small")
        with side:
            answers.class_panel(at, view, at.key, beside=True)
        return content
    with box:  # a phone: the class's answers under the figure
        st.html(f"<style>.st-key-figure_{at.step.focus} > :has(.st-key-lecture_class) {{ order: 1; }}</style>")
        answers.class_panel(at, view, at.key)
    return box


def words_with_focus(at: LectureStep, lead: str) -> None:
    """The step's explain, led by `lead`, at the top of its focus figure (where the projector's first screen and a
    phone's scroll bring the class: under a figure, the summary under the map and its links, and the explanation of
    a 6,000 px chain, were off that screen), or here, at the top of the page, for a step that names no figure."""
    def above_figure(box):
        with box:
            explain_words(at, lead)
        return box.container()

    if at.step.focus:
        hold_panel(at.step.focus, above_figure)
    else:
        explain_words(at, lead)


def explain_words(at: LectureStep, lead: str) -> None:
    with st.container(key="lecture_explain"):
        st.markdown(f"**{lead}** {at.step.explain}")


def asks_first(at: LectureStep | None) -> bool:
    """This page is a lecture step that asks its question before it shows its answer (not a page opened from it)."""
    return at is not None and not at.detour and bool(at.step.predict_first or at.step.answer)


def predict_first_gate(at: LectureStep | None, view, subject: Subject | None = None, sentence: str = "") -> None:
    """What a step asks of the class, above the page's figures: before Reveal, the question with what it refers to
    (subject: the page's input; else the shared sentence) and a follower's answer box; on a predict-first step the
    page stops here, before its figures. After Reveal the class's answers beside the model's, at the top of the
    step's focus figure (ui/focus.py), and a follower's phone brought to that figure."""
    no_panel()
    if not asks_first(at):
        if at is not None and not at.detour:  # a step that asks nothing: what it shows, where the class looks
            if at.step.explain:
                words_with_focus(at, "What this shows.")
            if at.follower and at.step.focus:  # a phone opens at the figure the projector shows, not at the controls
                scroll_to(at.step.focus)
        return
    revealed = is_revealed(at)
    problem = st.session_state.pop("_attnviz_reveal_problem", None)
    if problem:
        st.warning(problem, icon=":material/block:")
    if revealed:
        announce(REVEALED_SAYS[(at.step.predict_first, bool(at.room and at.step.answer))],
                 key=f"revealed {at.plan_id} {at.number}")  # to a screen reader, once per page load
        answers.show_note()  # an answer sent as the step was revealed: refused, and said
        if at.room and at.step.answer:
            if at.step.focus:
                hold_panel(at.step.focus, partial(placed_panel, at, view))
            else:
                answers.class_panel(at, view, at.key)
        elif at.step.explain:  # no class's answers to put it beside (no room, or nothing asked to answer)
            words_with_focus(at, "Why.")
        if at.follower and at.step.focus:  # the phone goes to the figure that answers the question
            scroll_to(at.step.focus)
        return
    with st.container(key="lecture_question", border=True):
        ask = None
        if at.step.answer:
            with contextlib.suppress(AttnvizError):  # the answer box says why, where it cannot be asked
                ask = asked(at.step, right_answer(at.step))
        question_box(at.step, subject, sentence, ask, options=not (at.follower and at.step.answer))
        if at.follower:
            if at.step.answer:
                answers.answer_box(at, view)
            st.caption("The figures appear here when the lecturer reveals them." if at.step.predict_first else
                       "The class's answers appear when the lecturer reveals them.")
        else:
            st.button("Reveal", key="lecture_reveal", type="primary", icon=":material/visibility:", on_click=reveal,
                      args=(at,), help="Show the page's figures (also the clicker's b or . key, or Enter; ← → still "
                      "change the step)." if at.step.predict_first else
                      "Close the answers and show the class's beside the model's (also b, . or Enter).")
    if at.step.predict_first:
        st.stop()
