"""Waking the pages that follow a room when the room changes: a page that waits on a step costs the server nothing
while nothing happens, and no browser asks for a run on a timer.

Why not a timer (st.fragment(run_every=1), as before): each poll run is a whole Streamlit run (~3 ms of server CPU,
120 of them a second for a class of 120), and a timer's request can land in the moment after a full run's script
has ended and before its last messages are sent: Streamlit then starts a new script runner for the fragment and
drops the messages the old one had not sent yet, so an answer was kept and counted while its "Your answer is in"
never reached the student (1.3-3 % of a class's answers in benchmarks/bench_class_follow.py).

Each page that follows a room (the projector, a follower) says so here on every full run (follow.poll_room): its
Streamlit session, its poll fragment and what it drew (the room's step and reveals and, on the projector, the room's
version: an answer changes it, and the projector shows the count). One thread per server process reads each
followed room once every WATCH_SECONDS, one store read per room however many pages follow it, and when a page's room
is no longer what the page drew (or the room ended) it runs that page's poll fragment: the poll opens the new step,
draws the figures or says that the room ended, as before. It does so only while the session runs nothing (else on
the next look), so no run's messages are ever dropped for it.

Streamlit has no public call that reruns a session from another thread: this does what its own file watcher does
(AppSession.request_rerun with the session's last client state, on the server's event loop), through the one door to
Streamlit's internals (ui/streamlit_private), which checks at start that each piece is there. On a Streamlit that
lacks one, follow() says no and the page polls on its fragment's timer instead (ui/lecture/follow.py);
tests/browser/test_browser_follow_wake.py checks both in Chromium.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from attnviz.lecture.store import RoomState
from ui import streamlit_private
from ui.lecture.store import lecture_store

WATCH_SECONDS = 0.25  # a room's change reaches its pages' polls within this (the issue's Next target is 3 s)
ENDED = ("ended",)  # what a page of a room that ended is woken for
OUT_OF_REACH = ("store out of reach",)  # what a page is woken for when the store does not answer
log = logging.getLogger(__name__)


@dataclass
class Page:
    """One page that follows a room: its poll fragment, and what of the room it last drew or was woken for."""

    fragment_id: str
    presenter: bool
    drawn: tuple


def drawn_of(state: RoomState, presenter: bool) -> tuple:
    """What of the room a page shows: the step and the reveals; the projector also the answer count (the version)."""
    return state.step, state.revealed, state.version if presenter else None


_lock = threading.Lock()
_rooms: dict[str, dict[str, Page]] = {}  # room code -> Streamlit session id -> the page
_watcher: threading.Thread | None = None


def follow(room: str, state: RoomState, presenter: bool, fragment_id: str) -> bool:
    """This session's page follows `room` and drew `state`; False where there is no Streamlit server to wake it
    (AppTest, a bare script run) or this Streamlit lacks what waking takes (the page then polls on a timer)."""
    global _watcher
    session_id = streamlit_private.session_id()
    if session_id is None or not fragment_id:
        return False
    with _lock:
        for pages in _rooms.values():  # a session follows one room: the one its page is in now
            pages.pop(session_id, None)
        _rooms.setdefault(room, {})[session_id] = Page(fragment_id, presenter, drawn_of(state, presenter))
        if _watcher is None:
            _watcher = threading.Thread(target=watch, name="attnviz-room-watch", daemon=True)
            _watcher.start()
    return True


def watch() -> None:
    """The process's one watcher: look at every followed room, wake the pages whose room changed."""
    while True:
        time.sleep(WATCH_SECONDS)
        try:
            look()
        except Exception:  # never let the thread die: no page of this process would follow its room any more
            log.exception("attnviz room watch")


def look() -> None:
    """One look at every followed room (one store read each)."""
    with _lock:
        rooms = {code: list(pages.items()) for code, pages in _rooms.items()}
    if not rooms:
        return
    if not streamlit_private.server_running():  # the server stopped (a test's runtime): nobody to wake
        with _lock:
            _rooms.clear()
        return
    store = lecture_store()
    for code, pages in rooms.items():
        live = []
        for session_id, page in pages:
            session = streamlit_private.server_session(session_id)
            if session is not None:
                live.append((session, page))
                continue
            with _lock:  # the tab closed or moved on (a step's page is a new session)
                if _rooms.get(code, {}).get(session_id) is page:
                    del _rooms[code][session_id]
                if not _rooms.get(code, True):
                    del _rooms[code]
        if not live:
            continue
        try:
            state = store.room(code)
        except Exception:  # the store out of reach: each page's poll is woken once to say so (its own read fails
            state = OUT_OF_REACH  # too), and again once the store answers, which takes the message away
        for session, page in live:
            if state is OUT_OF_REACH or state is None:
                now = state or ENDED
            else:
                now = drawn_of(state, page.presenter)
            if now != page.drawn:
                streamlit_private.on_server_loop(session, wake, session, page, now)


def wake(session, page: Page, now: tuple) -> None:
    """On the server's event loop: run the page's poll fragment with the session's last client state (its query and
    widget values), as a browser's timer would ask for it; not while the session has a script runner (a run going
    on, or one whose last messages are still to be sent: a new runner would drop them), and then on the next look."""
    if page.drawn == now or not streamlit_private.session_is_idle(session):
        return
    page.drawn = now
    streamlit_private.rerun_fragment(session, page.fragment_id)
