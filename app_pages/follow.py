"""Follow a lecture: the one link (and QR code) a class opens, /follow?room=<code>. It stays open for the whole
lecture and shows the room's step as a follower sees it: drawn once per step and Reveal in each server process and
sent to every follower, the answer box each student's own (ui/lecture/follower_view.py); it moves when the room moves
(ui/lecture/wake.py). Where a view cannot be shared (AppTest, a Streamlit that lacks what it takes), it opens the
step's page itself (ui/lecture/bar.py), which moves with the projector, asks its question, takes an answer and shows
the figures when the lecturer reveals them."""

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture import step_link
from attnviz.lecture.store.base import clean_code
from ui import streamlit_private
from ui.lecture import follower_view
from ui.lecture.follow import close_phone_sidebar, navigate
from ui.lecture.plans import plan_by_id
from ui.lecture.store import lecture_store, store_message

TITLE = "Follow the lecture"  # the page's own title; a shared step view has its own bar and title instead
raw = st.query_params.get("room")
titled = raw is None  # a typed code: the title is drawn above the box already
if raw is None:
    st.title(TITLE)
    typed = st.text_input("Room code (on the projector, under Students)", max_chars=12, key="follow_room",
                          placeholder="e.g. K7QF2")
    if not typed:
        st.info("Scan the projector's QR code, or type the room code the lecturer gives.", icon=":material/groups:")
        st.stop()
    raw = typed
try:
    code = clean_code(raw)
    state = lecture_store().room(code)
    if state is None:
        if not titled:
            st.title(TITLE)
        st.warning(f"There is no lecture room {code} (a room ends hours after its lecture, or when the server "
                   "restarts). Check the code on the projector.", icon=":material/search_off:")
        st.stop()
    if follower_view.can_share():
        if st.query_params.get("room") != code:  # a typed code: the address is the room's follow link
            st.query_params["room"] = code
        follower_view.follow_room(code)  # first on the page, where a step's page has its bar
        streamlit_private.reload_page_on_reconnect()  # a page whose server process died loads its link again
        close_phone_sidebar()  # a reload kept a phone's open menu over the step's bar
        st.stop()
    plan = plan_by_id(state.plan_id)
except AttnvizError as err:
    if not titled:
        st.title(TITLE)
    store_message(err)
    st.stop()
if not titled:
    st.title(TITLE)
step = plan.step(state.step)
st.markdown(f"**{plan.title}** · room {code} · Step {state.step} of {len(plan.steps)}: {step.title}")
link = step_link(step, lecture=state.plan_id, number=state.step, room=code, present=False)
navigate(link)
