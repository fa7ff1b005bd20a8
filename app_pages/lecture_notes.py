"""Presenter notes, for the lecturer's own screen: the step the projector shows (its room's), its question and notes,
and what comes next. Follows the projector by looking at the room every second (ui/lecture/room.py)."""

import time

import streamlit as st

import ui
from ui.lecture import plans
from ui.lecture import room as rooms

st.title("Presenter notes")
code = rooms.clean_code(st.query_params.get("room"))
if not code:
    typed = st.text_input("Room code (shown on the Lecture page)", max_chars=12, key="notes_room",
                          placeholder="e.g. K7QF")
    code = rooms.clean_code(typed)
    if typed and not code:
        st.warning("A room code has letters and digits only (no 0, O, 1 or I), as the Lecture page shows it.",
                   icon=":material/edit:")
    if not code:
        st.info("Open this view from the Lecture page's \"Presenter notes\" button, or type the room code.",
                icon=":material/speaker_notes:")
        st.stop()
    st.query_params["room"] = code


@st.fragment(run_every=1.0)
def notes() -> None:
    """The room's step now (rerun every second, alone: the rest of the page is not redone)."""
    with ui.guard("The presenter notes"):
        where = rooms.where(code)
        if where is None:
            st.info(f"Room {code}: waiting for the projector. On the Lecture page, click \"Open … on the projector\"; "
                    "these notes then follow its steps. (The projector's tab must be served by this same server "
                    "process: on the class server, open both from the same browser.)", icon=":material/hourglass:")
            return
        plan_id, number, updated = where
        plan = plans.plan_by_id(plan_id)
        step, n = plan.step(number), len(plan.steps)
        st.caption(f"Room {code} · {plan.title} · the projector has shown this step for "
                   f"{max(0, int(time.time() - updated)) // 60} min")
        st.header(f"Step {number} of {n}: {step.title}")
        if step.question:
            (st.warning if step.predict_first else st.info)(
                ("**Predict first**, then Reveal on the projector: " if step.predict_first else "**Ask:** ")
                + step.question, icon=":material/help:")
        with st.container(key="notes_text"):
            st.markdown(step.notes or "_No notes for this step._")
        st.divider()
        st.markdown(f"**Next:** {number + 1}. {plan.step(number + 1).title}" if number < n else "**Last step.**")


st.html("<style>.st-key-notes_text p, .st-key-notes_text li { font-size: 1.35rem; line-height: 1.55; }</style>")
notes()
