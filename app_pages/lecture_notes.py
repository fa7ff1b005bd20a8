"""Presenter notes, for the lecturer alone on any device (/lecture_notes?room=<code>&key=<presenter key>): the room's
step, its notes, question, right answer (computed for the step's own state, as on every screen) and why, whether it
is revealed, what the class answered so far (each option's or key token's count, live, before Reveal: for the
lecturer's eyes only), the time on this step and in all against the plan's minutes, and Previous / Next / Reveal,
which move the room: the projector and every follower follow it. Looks at the room every second (one fragment)."""

import contextlib
import time

import streamlit as st

import ui
from attnviz.errors import AttnvizError
from attnviz.lecture.store import RoomState, StoreError
from attnviz.lecture.store.base import clean_code
from ui.lecture import plans
from ui.lecture.class_so_far import class_so_far
from ui.lecture.presenter_key import held_key, hold_key, key_in_link
from ui.lecture.room_record import export_button
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store, store_message

st.title("Presenter notes")
st.html("<style>.st-key-notes_text p, .st-key-notes_text li { font-size: 1.35rem; line-height: 1.55; }</style>")
raw_room = st.query_params.get("room")
raw_key = key_in_link()
if raw_room is not None and raw_key is None:  # a reload: the key this browser was given with the notes' link
    with contextlib.suppress(StoreError):
        raw_key = held_key(clean_code(raw_room))
if raw_room is None or raw_key is None:
    st.info("These notes are the lecturer's: open them from the Lecture page's \"Presenter notes\" link or its QR "
            "code (they carry the room's presenter key). To follow a lecture as a student, open /follow.",
            icon=":material/speaker_notes:")
    st.stop()
try:
    code = clean_code(raw_room)
    store = lecture_store()
    if store.room(code) is None:
        st.warning(f"There is no room {code} (a room is forgotten hours after its lecture, or when the server "
                   "restarts): start a new one on the Lecture page.", icon=":material/search_off:")
        st.stop()
    if not store.is_presenter(code, raw_key):
        st.error(f"This link's presenter key is not room {code}'s: only the lecturer's link shows the notes and moves "
                 "the room. Nothing was changed.", icon=":material/key_off:")
        st.stop()
except StoreError as err:
    store_message(err)
    st.stop()
KEY = raw_key
hold_key(code, KEY)  # out of the address bar (a phone's screen is seen too); this browser keeps it for a reload


def move(action: str, step: int) -> None:
    """Previous/Next (go) or Reveal, with the presenter key; a problem is said on the next look."""
    try:
        (store.go_to if action == "go" else store.reveal)(code, KEY, step)
    except StoreError as err:
        st.session_state["notes_problem"] = err


def clock(seconds: float) -> str:
    minutes, rest = divmod(max(0, int(seconds)), 60)
    return f"{minutes}:{rest:02d}"


def planned(minutes: float | None) -> str:
    return f" of {minutes:g} min planned" if minutes else ""


def right_answer_said(step) -> None:
    """The right answer, for the step's own state: the same row and numbers as the projector's and the phones'."""
    try:
        right = right_answer(step)
    except AttnvizError as err:
        st.warning(f"The right answer cannot be computed: {err}", icon=":material/block:")
        return
    st.markdown(f"**Right answer:** {right.text} ({right.source})")


@st.fragment(run_every=1.0)
def notes() -> None:
    """The room's step now (rerun every second, alone: the rest of the page is not redone)."""
    with ui.guard("The presenter notes"):
        problem = st.session_state.pop("notes_problem", None)
        if problem is not None:
            store_message(problem)
        try:
            state: RoomState | None = store.room(code)
            if state is None:
                st.warning(f"Room {code} has ended (or expired).", icon=":material/logout:")
                return
            plan = plans.plan_by_id(state.plan_id)
            number, n = state.step, len(plan.steps)
            step = plan.step(number)
            answers = [a.value for a in store.answers(code, number, KEY)] if step.answer else []
            count = len(answers)
        except AttnvizError as err:
            store_message(err)
            return
        revealed = number in state.revealed
        now = time.time()
        total = sum(s.minutes or 0 for s in plan.steps)
        st.caption(f"Room {code} · {plan.title} · on this step {clock(now - state.step_started)}"
                   f"{planned(step.minutes)} · in all {clock(now - state.started)}{planned(total)}")
        st.header(f"Step {number} of {n}: {step.title}")
        buttons = st.columns(3)
        to_reveal = not revealed and bool(step.predict_first or step.answer)  # the step's next move: Reveal, not Next
        buttons[0].button("Previous", icon=":material/arrow_back:", key="notes_prev", on_click=move,
                          args=("go", number - 1), disabled=number <= 1, width="stretch")
        buttons[1].button("Next", icon=":material/arrow_forward:", key="notes_next", on_click=move,
                          args=("go", number + 1), disabled=number >= n, width="stretch",
                          type="secondary" if to_reveal else "primary")
        buttons[2].button("Revealed" if revealed else "Reveal", icon=":material/visibility:", key="notes_reveal",
                          on_click=move, args=("reveal", number), width="stretch", disabled=not to_reveal,
                          type="primary" if to_reveal else "secondary")
        if step.question:
            (st.warning if step.predict_first else st.info)(
                ("**Predict first:** " if step.predict_first else "**Ask:** ") + step.question, icon=":material/help:")
        facts = []
        if step.predict_first or step.answer:
            facts.append("**revealed**" if revealed else "**not revealed yet**")
        if step.answer:
            facts.append(f"**{count}** answer{'s' if count != 1 else ''} ({step.answer.kind})")
        if facts:
            st.markdown(" · ".join(facts))
        if step.answer:
            right_answer_said(step)
            class_so_far(step, answers, revealed)
        with st.container(key="notes_text"):
            st.markdown(step.notes or "_No notes for this step._")
        if step.explain:
            st.markdown(f"**Why** ({'shown at Reveal and ' if step.answer else ''}in the handout): {step.explain}")
        st.divider()
        st.markdown(f"**Next:** {number + 1}. {plan.step(number + 1).title}" if number < n else "**Last step.**")


notes()
export_button(code, KEY)
