"""A step's question answered by the class: the answer box a follower sees before Reveal (per the step's answer
kind), and at Reveal the class's answers beside the model's truth.

Answers are anonymous: a browser is a random id (SESSION), kept in a cookie for the browser's session so that a
follower's next step (a fresh page load) and a reload are the same student, never a name.
"""

from __future__ import annotations

import re
import secrets

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds import NUMBER, PICK, Ask, Reveal, Right, RowsFigure, answer_kind
from attnviz.lecture.store import StoreError
from ui.announce import announce
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.lecture.beside import draw_beside
from ui.lecture.keypad import number_keypad
from ui.lecture.step_state import asked, right_answer
from ui.lecture.store import lecture_store, store_message
from ui.shared_view import for_followers

# the keyboard's way through a pick (a group of radio buttons: one stop of Tab, arrows between, Space to pick)
PICK_BY_KEYS = "By keyboard: Tab to the options, move with ← →, press Space."


def plain(markdown: str) -> str:
    """A prompt's words without their markdown emphasis: the name a screen reader says for the group."""
    return re.sub(r"[*_`]", "", markdown)


SESSION = "_attnviz_student"  # this browser's anonymous id (session_state), also its cookie's name
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,32}")


def student_session() -> str:
    """This browser's anonymous id: the cookie's when it has one, else a new one (and the cookie is set)."""
    mine = st.session_state.get(SESSION)
    if mine:
        return mine
    cookie = str(st.context.cookies.get(SESSION) or "")
    mine = cookie if ID_PATTERN.fullmatch(cookie) else secrets.token_urlsafe(16)
    st.session_state[SESSION] = mine
    if mine != cookie:  # a session cookie (no expiry): gone when the browser closes
        st.html(f"<script>(window.parent || window).document.cookie = '{SESSION}={mine}; path=/; SameSite=Lax';"
                "</script>", unsafe_allow_javascript=True)
    return mine


NOTE = "_attnviz_answer_note"  # why this session's last answer was refused (a message), said on the next run
# an answer was sent and the box has not been drawn since: how many more full runs the poll may ask for to draw it
UNDRAWN = "_attnviz_answer_undrawn"
FULL_RUN_TRIES = 3


def answer_key(at) -> str:
    return f"lecture_answer_{at.room}_{at.number}"


def send_answer(at, ask: Ask) -> None:
    """The answer widget changed: check it and keep it in the room (the store refuses it after Reveal, or past its
    limits). A refusal is said on the next run that draws the box (show_note); a kept answer is confirmed from the
    store on every run that draws the box (answer_box). The callback may run at the start of the poll fragment's
    run, which draws nothing else, and a full run can be lost (Streamlit stops a run when another one is asked for):
    UNDRAWN stays set until a run draws the box, and the poll asks for a full run meanwhile (ui/lecture/follow.py)."""
    key = answer_key(at)
    picked = st.session_state.get(key)
    st.session_state[UNDRAWN] = FULL_RUN_TRIES
    try:
        store = lecture_store()
        mine = store.my_answer(at.room, at.number, student_session())
        if picked is None:
            # a second tap on the chosen option unpicks it in the browser, but an answer is never taken back: the
            # highlight comes back on the answer the store keeps, so what the phone shows is what counts
            if mine is not None and ask.widget == PICK:
                st.session_state[key] = ask.option_of(mine)
            return
        value = ask.check(picked)
        if value == mine:
            # the answer it holds: the browser sends a widget's value again when the box comes back (after a run
            # that did not draw it, as at Reveal): nothing to send, and no "answers are closed" for a student who
            # changed nothing
            return
        store.answer(at.room, at.number, student_session(), value)
    except AttnvizError as err:
        st.session_state[NOTE] = err


def show_note() -> None:
    """Why the last answer was refused, once."""
    st.session_state.pop(UNDRAWN, None)  # this run says what became of it
    note = st.session_state.pop(NOTE, None)
    if note is not None:
        store_message(note)


def confirmation(ask: Ask, mine: str) -> str:
    """What the student's page says of the answer the store keeps for this session."""
    return f"Your answer is in: {ask.shown(mine)}. You can change it until the lecturer reveals."


ANSWER_BOX = "lecture_answer"  # the answer box's container: in a view drawn for every follower, each one's own


def answer_box(at, view=None) -> None:
    """A follower's answer to the step's question, before Reveal: pick or type, changeable until Reveal. In a view
    drawn once for every follower (ui/shared_view.py) the box is left empty: each follower's page draws its own
    there (ui/lecture/follower_view.py)."""
    if for_followers():
        st.container(key=ANSWER_BOX, border=True)
        return
    with st.container(key=ANSWER_BOX, border=True):
        answer_widgets(at)


# Streamlit cuts a pill's label to one line ("B. It rises by about 4 nats, most of …" on a phone): a choice's options
# wrap onto more lines instead, so a student reads each whole
OPTIONS_WRAP = """<style>
.st-key-lecture_answer [data-testid="stButtonGroup"] button,
.st-key-lecture_answer [data-testid="stButtonGroup"] button * { white-space: normal; overflow: visible; text-overflow: clip; }
.st-key-lecture_answer [data-testid="stButtonGroup"] button { height: auto; text-align: left; }
@media (pointer: coarse) { .st-key-lecture_by_keys { display: none; } }
</style>"""


def answer_widgets(at, ask: Ask | None = None) -> None:
    """The answer box's insides for this browser: its widget with the answer the store keeps for it, and what became
    of its last answer. What is asked comes from the step's own state (the sentence's tokens of a token question),
    as the answer is checked (ask: that, when the caller has it already)."""
    try:
        mine = lecture_store().my_answer(at.room, at.number, student_session())
        ask = ask or asked(at.step, right_answer(at.step))
    except AttnvizError as err:
        store_message(err)
        st.session_state.pop(UNDRAWN, None)  # said: nothing more to draw
        return
    sent = dict(key=answer_key(at), on_change=send_answer, args=(at, ask))
    if ask.widget == PICK:
        st.markdown(ask.prompt)
        with st.container(key="lecture_by_keys"):  # not on a touch screen (OPTIONS_WRAP): it has no Tab to press
            st.caption(PICK_BY_KEYS)
        st.html(OPTIONS_WRAP)
        labels = dict(zip(ask.options, ask.labels, strict=True))
        # the group's name is what a screen reader says on entering it: the question itself
        st.pills(plain(ask.prompt), list(ask.options), format_func=labels.get, label_visibility="collapsed",
                 default=ask.option_of(mine), **sent)
    elif ask.widget == NUMBER:
        st.markdown(ask.prompt)
        # a form: its Enter sends the box as it is, an empty one too (a text box alone sent nothing when nothing had
        # changed, and the student was told nothing), and its Send button is a phone's Enter where the number keypad
        # has none. A text box, not st.number_input: a number the browser's number box cannot hold (5,000 digits,
        # 1e400) was dropped there without a word; here every typed value reaches ask.check, which says what is wrong
        with st.form(f"{sent['key']}_form", border=False, enter_to_submit=True):
            st.text_input("Your answer (a number)", value=ask.shown(mine) if mine else "",
                          placeholder="type a number, e.g. 0.25, then Enter", key=sent["key"])
            st.form_submit_button("Send", icon=":material/send:", key=f"{sent['key']}_send",
                                  on_click=send_answer, args=sent["args"])
        number_keypad()  # a phone's number keypad for that text box
    show_note()
    if mine:  # from the store, on every run that draws the box: never a one-run flag
        said = confirmation(ask, mine)
        st.success(said, icon=":material/check:")
        announce(said, key=f"answer {at.room} {at.number} {mine}")  # said once per answer, not per run
    st.session_state.pop(UNDRAWN, None)  # the box is drawn with the store's answer


MINE_BOX = "lecture_mine"  # after Reveal, what this follower answered: in a view drawn for every follower, each one's


def your_answer(at, ask: Ask, right: Right) -> None:
    """What this browser answered, and whether it is the right answer (a follower's phone after Reveal)."""
    try:
        mine = lecture_store().my_answer(at.room, at.number, student_session())
    except StoreError as err:
        store_message(err)
        return
    if mine is None:
        st.markdown(f"**Your answer:** none (you did not answer this question). The right answer: {right.text}.")
        return
    spec = at.step.answer
    if answer_kind(spec).is_right(spec, right, mine):
        st.markdown(f"**Your answer:** {ask.shown(mine)}, ✓ right.")
    else:
        st.markdown(f"**Your answer:** {ask.shown(mine)}, ✗ not the right answer. The right answer: {right.text}.")


def class_panel(at, view=None, key: str = "", beside: bool = False) -> None:
    """At Reveal: the class's answers beside the right answer, as the step's kind draws them, and why it is right
    (the step's explain); on a follower's phone what this student answered first. The right answer is computed for
    the step's own state, as on every other screen. beside: in the projector's column beside the figure that answers
    the question (ui/lecture/beside.py)."""
    try:
        values = [a.value for a in lecture_store().answers(at.room, at.number, key or None)]
    except StoreError as err:
        store_message(err)
        return
    spec = at.step.answer
    try:
        right = right_answer(at.step)
    except AttnvizError as err:
        st.warning(f"The right answer cannot be computed here: {err}", icon=":material/block:")
        return
    ask = asked(at.step, right)
    if at.follower:  # outside the class's panel: on a phone that goes under the figure (gate.placed_panel), this
        # stays above it, where Reveal brings the phone: a student's own verdict on the first screen (it was 1,100 to
        # 2,100 px down under a tall figure)
        if for_followers():  # each follower's page fills it with its own (ui/lecture/follower_view.py)
            st.container(key=MINE_BOX)
        else:
            with st.container(key=MINE_BOX):
                your_answer(at, ask, right)
    with st.container(key="lecture_class"):
        reveal = answer_kind(spec).reveal(spec, right, ask, values)
        if beside:
            draw_beside(spec, right, ask, values, reveal)
        else:
            draw_reveal(reveal)
        if at.step.explain:
            with st.container(key="lecture_explain"):
                st.markdown(f"**Why.** {at.step.explain}")


def draw_reveal(reveal: Reveal) -> None:
    """A kind's Reveal: its words, its figure (the app's heatmap for rows, plotly for a chart), its caption."""
    st.markdown(reveal.headline)
    figure = reveal.figure
    if isinstance(figure, RowsFigure):
        heatmap(figure.values, list(figure.rows), list(figure.columns), key=reveal.key, show_values=True, y_title="",
                axis_words=figure.axis_words, value_name=figure.value_name)
    elif figure is not None:
        plotly_chart(st, figure, key=reveal.key)
    if reveal.caption:
        st.caption(reveal.caption)
