"""Lecture mode: pick a plan (the default one or your own TOML file), step through it, start the class's room, open a
step on the projector, the presenter notes on any device, and give the class its follow link. The projector's pages
carry the lecture bar (ui/lecture/bar.py)."""

import contextlib
from contextlib import nullcontext

import streamlit as st

import ui
from attnviz.errors import AttnvizError
from attnviz.lecture import follow_link, notes_link, step_link
from attnviz.lecture.plan import MAX_BYTES
from attnviz.lecture.store import StoreError, StoreUnavailable
from ui.lecture import lecturer, plans
from ui.lecture.addresses import class_base, loopback_warning
from ui.lecture.answers import student_session
from ui.lecture.bar import students_qr
from ui.lecture.presenter_key import held_keys, hold_key
from ui.lecture.room_record import export_button
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store, store_message
from ui.lecture.warm import warm_plan, warming
from ui.menu import page_titles

ROOMS = "lecture_rooms"  # this session's rooms: plan id -> (code, presenter key)
AT = "lecture_at"  # the step shown here (1-based)
PICK = "lecture_pick"  # the plan chosen

st.title("Lecture mode", help="A lecture plan is an ordered list of steps: a page of this app in a given state, "
                              "notes for you, and a question to ask the class first, with its right answer. Its format is in "
                              "docs/lecture-plans.md.")
st.caption("Start the class's room, open a step on the projector (a new tab: move it to the projector's screen), the "
           "presenter notes on your phone or laptop (Next, Previous, Reveal there move the projector and every "
           "student), and show the class its follow link.")
st.markdown("**A clicker runs the whole lecture** on the projector's tab: → or PageDown is Next, ← or PageUp is "
            "Previous, and its blank-screen key (**b** or **.**) or **Enter** is Reveal.")


def plan_name(plan_id: str) -> str:
    """A plan's title for the picker (its id where it cannot be read: the error is shown below)."""
    try:
        title = plans.plan_by_id(plan_id).title
    except AttnvizError:
        return f"{plan_id} (cannot be used: see below)"
    return f"{title} ({'uploaded' if plan_id.startswith('u') and plan_id not in plans.shipped_ids() else plan_id})"


def step_by(delta: int, n: int) -> None:
    st.session_state[AT] = min(max(int(st.session_state.get(AT, 1)) + delta, 1), n)


def start_room(plan_id: str) -> None:
    """A new room for this plan in the store, made by this browser; its code and presenter key kept in this session
    (and the key in this browser: my_rooms finds it again after a reload)."""
    try:
        st.session_state.setdefault(ROOMS, {})[plan_id] = lecture_store().create_room(
            plan_id, student_session(), admitted=lecturer.admitted())
        warm_plan(plan_id, plans.plan_by_id(plan_id), right_answer)  # every step drawn once, in the background
    except AttnvizError as err:
        st.session_state["lecture_room_problem"] = err


def my_rooms() -> dict[str, tuple[str, str]]:
    """This browser's live rooms by plan -> (code, presenter key): those started in this session, and those whose key
    this browser holds (a reload of this page, another tab); a room that ended is forgotten. A store out of reach:
    this session's, as they were (the page says so where it asks the store next)."""
    rooms, store = dict(st.session_state.get(ROOMS, {})), lecture_store()
    try:
        for plan_id, (code, _) in list(rooms.items()):
            if store.room(code) is None:
                del rooms[plan_id]
        known = {code for code, _ in rooms.values()}
        for code, key in held_keys().items():
            with contextlib.suppress(StoreError):  # a cookie's name that is no room code
                state = None if code in known else store.room(code)
                if state is not None and state.plan_id not in rooms and store.is_presenter(code, key):
                    rooms[state.plan_id] = (code, key)
    except StoreUnavailable:
        return rooms
    if rooms or ROOMS in st.session_state:
        st.session_state[ROOMS] = rooms
    for code, key in rooms.values():
        hold_key(code, key)
    return rooms


@st.fragment(run_every=2.0)
def warming_steps(plan_id: str) -> None:
    """How far the room's plan is drawn in the background, every 2 s until it is done (then the page draws again)."""
    progress = warming(plan_id)
    if progress is None or progress.finished is not None:
        st.rerun(scope="app")
    st.caption(f"Preparing the steps for the class: {progress.done} of {progress.total} drawn once on this server, in "
               "the background (Next and Reveal then draw at once). You can open the projector now.")


def notes_open(plan_id: str, rooms: dict) -> bool:
    """Whether this browser may read the plan's notes (and what its steps open with): a lecturer, or the one whose room
    runs it; a shipped plan (public with the app) also anyone while no room of it runs."""
    if plan_id in rooms or lecturer.may_lecture():
        return True
    return plan_id in plans.shipped_ids() and lecture_store().rooms_running(plan_id) == 0


with ui.guard("The lecture plan"):
    uploads = st.session_state.setdefault("lecture_uploads", [])  # this session's uploaded plans, by id
    lecturing = lecturer.may_lecture()
    lecturer.remember_admission()
    if not lecturing:
        lecturer.who_may_lecture()
    with st.expander("Use your own plan (a .toml file)", icon=":material/upload:") if lecturing else nullcontext():
        upload = st.file_uploader("Lecture plan (TOML, at most 200 kB)", type=["toml"], key="lecture_upload",
                                  help="The format is in docs/lecture-plans.md; "
                                       "attnviz/assets/lectures/attention.toml is an example.") if lecturing else None
        if upload is not None and upload.size > MAX_BYTES:
            st.error(f"{upload.name} is {upload.size:,} bytes; a lecture plan may have at most {MAX_BYTES:,}. Is it "
                     "the right file?", icon=":material/error:")
        elif upload is not None:
            try:
                new_id = plans.add_upload(upload.getvalue(), student_session(), lecturer.admitted())
            except AttnvizError as err:
                st.error(f"{upload.name}: {err}", icon=":material/error:")
            else:
                if new_id not in uploads:  # a new upload is the plan shown; later the picker decides
                    uploads.append(new_id)
                    st.session_state[PICK] = new_id
                st.success(f"{upload.name}: {len(plans.plan_by_id(new_id).steps)} steps, checked.",
                           icon=":material/check:")
    options = [*plans.shipped_ids(), *uploads]
    asked = str(st.query_params.get("lecture") or "")
    if asked and asked not in options:
        options.append(asked)  # a link to a plan uploaded in another tab of this server process
    if PICK not in st.session_state or st.session_state[PICK] not in options:
        st.session_state[PICK] = asked or plans.DEFAULT
    plan_id = st.selectbox("Plan", options, key=PICK, format_func=plan_name)
    if st.query_params.get("lecture") != plan_id:
        st.query_params["lecture"] = plan_id  # a reload (or a shared link) opens the same plan
    plan = plans.plan_by_id(plan_id)
    n = len(plan.steps)
    if st.session_state.get("lecture_plan_id") != plan_id:  # another plan: from its first step
        st.session_state["lecture_plan_id"], st.session_state[AT] = plan_id, 1

    st.header(plan.title)
    if plan.description:
        st.markdown(plan.description)
    titles = page_titles()
    at = min(max(int(st.session_state.get(AT, 1)), 1), n)
    st.session_state[AT] = at
    nav = st.columns([1.5, 1.2, 4.3], vertical_alignment="bottom")  # "Previous" whole at 1024 px, on a projector too
    nav[0].button("Previous", icon=":material/arrow_back:", key="lecture_prev", on_click=step_by, args=(-1, n),
                  disabled=at <= 1, width="stretch")
    nav[1].button("Next", icon=":material/arrow_forward:", key="lecture_next", on_click=step_by, args=(1, n),
                  disabled=at >= n, width="stretch")
    nav[2].selectbox("Step", list(range(1, n + 1)), key=AT, format_func=lambda k: f"{k}. {plan.step(k).title}")
    step = plan.step(at)

    st.subheader(f"Step {at} of {n}: {step.title}")
    problem = st.session_state.pop("lecture_room_problem", None)
    if problem is not None:
        store_message(problem)
    rooms = my_rooms()
    room = rooms.get(plan_id)
    if room is None and not lecturing:
        pass  # who_may_lecture said why above
    elif room is None:
        st.button("Start the class's room", key="lecture_start", type="primary", icon=":material/meeting_room:",
                  on_click=start_room, args=(plan_id,),
                  help="A room is this lecture given once: the projector, your notes and every student's screen meet "
                       "there, and the class's answers are kept there (anonymous) for hours after the lecture.")
    else:
        code, key = room
        base = class_base("lecture")
        projector = step_link(step, lecture=plan_id, number=at, room=code, key=key)
        links = st.columns(2)
        links[0].link_button(f"Open step {at} on the projector", projector, icon=":material/co_present:",
                             type="primary", width="stretch",
                             help="Opens a new tab in presentation mode with the lecture bar: move it to the "
                                  "projector. ← → or PageUp/PageDown step through the plan there, and move the room.")
        links[1].link_button(f"Presenter notes (room {code})", notes_link(".", code, key),
                             icon=":material/speaker_notes:", width="stretch",
                             help="Your notes, the question's expected answer, the live answer count and the time; "
                                  "Next, Previous and Reveal there move the projector and every student.")
        loopback_warning(base)
        st.html("<style>.st-key-lecture_follow_card img, .st-key-lecture_notes_card img "
                "{ image-rendering: pixelated; }</style>")  # one pixel per module, drawn square
        cards = st.columns(2)
        with cards[0].container(border=True, key="lecture_follow_card"):
            st.markdown(f"**For the class: room {code}**")
            st.image(students_qr(follow_link(base, code)), width=220, output_format="PNG")
            st.caption(follow_link(base, code))
        with cards[1].container(border=True, key="lecture_notes_card"):
            st.markdown("**For you alone: the presenter notes on your phone**")
            with st.expander("Show the QR code (it carries the presenter key)", icon=":material/key:"):
                st.image(students_qr(notes_link(base, code, key)), width=220, output_format="PNG")
                st.caption("Whoever opens this link moves the room: don't show it on the projector.")
        export_button(code, key)
        progress = warming(plan_id)
        if progress is not None and progress.finished is None:
            warming_steps(plan_id)
        elif progress is not None:
            took = sum(progress.seconds.values())
            st.caption(f"Every step was drawn once on this server ({progress.total} steps in {took:.0f} s): Next and "
                       "Reveal draw from what that made."
                       + (f" Steps {', '.join(map(str, progress.failed))} did not finish in time." if progress.failed
                          else ""))
    st.markdown(f"**Page:** {titles.get(step.page, step.page)} (`/{step.page}`)")
    open_notes = notes_open(plan_id, rooms)
    if step.state and open_notes:  # what a step opens with can be its answer (the explorer's picked cell)
        st.markdown("**Its settings:** " + ", ".join(f"`{k} = {v}`" for k, v in step.state))
    if step.question:
        (st.warning if step.predict_first else st.info)(
            ("**Predict first** (the figures stay hidden until you reveal them): " if step.predict_first
             else "**Ask first:** ") + step.question, icon=":material/help:")
    if not open_notes:
        st.caption("The steps' notes, settings and expected answers are the lecturer's while a lecture of this plan "
                   "runs.")
    elif step.notes:
        st.markdown("**Notes**\n\n" + step.notes)

    st.subheader("Every step")
    ui.table(st, [{"#": k, "Step": s.title, "Page": titles.get(s.page, s.page),
                   "Asks first": ("predict, then reveal: " if s.predict_first else "") + s.question}
                  for k, s in enumerate(plan.steps, start=1)], hide_index=True, width="stretch", key="lecture_steps")
