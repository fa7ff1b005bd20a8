"""Following a room: the projector and every follower look at the room (a fragment that reads the room's version
alone, a number), open the room's step when the room moved, and draw the page again on a Reveal. The look is run
when the room changes, by the server process's room watcher (ui/lecture/wake.py), never on a browser's timer: an
idle page costs the server nothing, and no timer's run drops a full run's last messages (an answer's confirmation).
On a Streamlit that lacks what the watcher needs (ui/streamlit_private checks at start), the look runs on the
fragment's own timer instead, and the page says so: slower, but it follows.
A student can break away ("Explore this view") and come back with one click (bar.back_to_following)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st

from attnviz.lecture import LECTURE_KEYS
from attnviz.lecture.store import StoreError
from ui import streamlit_private
from ui.lecture import wake
from ui.lecture.answers import UNDRAWN
from ui.lecture.store import lecture_store, store_message
from ui.shared_view import DRAWN_AS, for_followers

SEEN = "_attnviz_room_seen"  # the room's version this page last drew or looked at
COUNT = "_attnviz_room_count"  # the answer count the projector last showed


def poll_room(at) -> None:
    """Follow the room from this page (the projector's or a follower's). A follower whose link names another step
    than the room's (an old link, a reload after Next) goes to the room's step at once. A view drawn for every
    follower (ui/lecture/follower_view.py) follows nothing: it notes which step and Reveal it drew."""
    if for_followers():
        st.session_state[DRAWN_AS] = (at.number, at.number in at.state.revealed)
        return
    if at.state.step != at.number:
        navigate(at.link(at.state.step))
        return
    streamlit_private.reload_page_on_reconnect()  # a page whose server process died loads its link again
    st.session_state[SEEN] = at.state.version
    st.session_state[COUNT] = None
    st.session_state[IN_FULL_RUN] = True  # the fragment's body runs inline now: this run draws the answer box itself
    (_poll if streamlit_private.works("wake") else _poll_on_timer)(at)  # a Streamlit that lacks a piece: a timer
    st.session_state[IN_FULL_RUN] = False
    for feature in ("wake", "reconnect"):
        streamlit_private.say_missing(feature)


IN_FULL_RUN = "_attnviz_poll_in_full_run"


@st.fragment  # no timer: ui/lecture/wake.py runs it when the room changes (why not a timer: there)
def _poll(at) -> None:
    """One look at the room: its version alone when nothing changed."""
    if st.session_state.get(IN_FULL_RUN):  # the full run drew the room as at.state: the watcher wakes it on a change
        wake.follow(at.room, at.state, at.presenter, streamlit_private.fragment_id())
    tries = st.session_state.get(UNDRAWN, 0)
    if tries and not st.session_state.get(IN_FULL_RUN):
        # an answer was sent and no run has drawn the box since (its callback ran in this fragment's run, or the
        # full run it caused was stopped): ask for a full one, a bounded number of times
        st.session_state[UNDRAWN] = tries - 1
        st.rerun(scope="app")
    store = lecture_store()
    try:
        version = store.version(at.room)
        if version is None:
            st.warning(f"Room {at.room} has ended (or expired): this page stays as it is.", icon=":material/logout:")
            return
        if version != st.session_state.get(SEEN):
            state = store.room(at.room)
            if state.step != at.number:  # Next, Previous: open the room's step (a plain navigation, as a link)
                navigate(at.link(state.step))
                return
            st.session_state[SEEN] = version
            if (at.number in state.revealed) != (at.number in at.state.revealed):
                st.rerun(scope="app")  # Reveal: the figures (and the class's answers) come
            if at.presenter and at.step.answer and at.number not in state.revealed:
                st.session_state[COUNT] = store.answer_count(at.room, at.number)
    except StoreError as err:
        store_message(err)
        return
    if at.presenter and at.step.answer and at.number not in at.state.revealed:
        count = st.session_state.get(COUNT)
        if count is None:
            count = st.session_state[COUNT] = store.answer_count(at.room, at.number)
        st.caption(f"**{count}** answer{'s' if count != 1 else ''} so far (room {at.room})")


# the same look on the fragment's own timer, where this Streamlit lacks what the watcher needs to wake a page
_poll_on_timer = st.fragment(run_every=streamlit_private.POLL_SECONDS)(_poll.__wrapped__)


STORE_RETRY_SECONDS = 2.0  # a page that found the store out of reach asks again this often


@st.fragment(run_every=STORE_RETRY_SECONDS)
def wait_for_store() -> None:
    """Ask the store again; once it answers, draw the whole page again (it follows the room from there)."""
    try:
        lecture_store().ping()
    except StoreError:
        st.caption(f"Trying again every {STORE_RETRY_SECONDS:g} s…")
        return
    st.rerun(scope="app")


def navigate(link: str) -> None:
    """Open `link` (relative to this page) in this tab, as a click on a link would."""
    st.html("<script>(() => { const w = window.parent || window; "
            f"w.location.assign(new URL({json.dumps(link)}, w.location.href).href); }})();</script>",
            unsafe_allow_javascript=True)
    st.caption(f"Moving to the lecture's step… ([open it]({link}))")


# Streamlit keeps a sidebar its reader opened open across reloads (its localStorage); on a phone the sidebar lies
# over the page, and a follower's reload then opened on the app's menu, over the step's bar and "Explore this view".
# A follower's page load closes it on a screen where it lies over the page (Streamlit's md breakpoint, 768 px), as
# its own button would (which also remembers it closed); opened again later, it stays open until the next load.
PHONE_SIDEBAR_CLOSED = """<script>
(() => {
  const win = window.parent || window, doc = win.document;
  if (win.__attnvizPhoneSidebar) return;
  win.__attnvizPhoneSidebar = true;
  if (!win.matchMedia('(max-width: 768px)').matches) return;
  let tries = 0;
  const timer = win.setInterval(() => {
    // open: closed now; closed (the header's button to open it): left to the reader from here on
    const open = doc.querySelector('[data-testid="stSidebarCollapseButton"] button[aria-expanded="true"]');
    const closed = doc.querySelector('[data-testid="stExpandSidebarButton"][aria-expanded="false"]');
    if (open) open.click();
    if (open || closed || ++tries > 30) win.clearInterval(timer);
  }, 100);
})();
</script>"""


def close_phone_sidebar() -> None:
    """On a phone, a follower's page opens with the sidebar closed (PHONE_SIDEBAR_CLOSED)."""
    st.html(PHONE_SIDEBAR_CLOSED, unsafe_allow_javascript=True)


def explore_link(at, query: list[tuple[str, str]]) -> str:
    """The ordinary page with this view's settings and the room (the way back), without the lecture's keys."""
    kept = [(k, v) for k, v in query if k not in LECTURE_KEYS] + [("room", at.room)]
    return f"./{at.step.page}?{urlencode(kept)}"
