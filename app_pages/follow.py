"""Follow a lecture: the one link (and QR code) a class opens, /follow?room=<code>. It opens the room's step as a
follower sees it (ui/lecture/bar.py): that step's page moves with the projector, asks its question, takes an
answer, and shows the figures when the lecturer reveals them."""

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture import step_link
from attnviz.lecture.store.base import clean_code
from ui.lecture.follow import navigate
from ui.lecture.plans import plan_by_id
from ui.lecture.store import lecture_store, store_message

st.title("Follow the lecture")
raw = st.query_params.get("room")
if raw is None:
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
        st.warning(f"There is no lecture room {code} (a room ends hours after its lecture, or when the server "
                   "restarts). Check the code on the projector.", icon=":material/search_off:")
        st.stop()
    plan = plan_by_id(state.plan_id)
except AttnvizError as err:
    store_message(err)
    st.stop()
step = plan.step(state.step)
st.markdown(f"**{plan.title}** · room {code} · Step {state.step} of {len(plan.steps)}: {step.title}")
link = step_link(step, lecture=state.plan_id, number=state.step, room=code, present=False)
navigate(link)
