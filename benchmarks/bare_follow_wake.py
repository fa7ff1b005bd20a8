"""The wake of benchmarks/bare_follow_app.py: the room is a small JSON file the benchmark writes (BARE_FOLLOW_STATE);
one thread per process looks at it every WATCH_SECONDS and reruns each registered page's fragment when it changed,
through the app's own door to Streamlit's internals, as ui/lecture/wake.py does for a lecture room."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ui import streamlit_private

WATCH_SECONDS = 0.25  # as ui/lecture/wake.py
STATE = Path(os.environ.get("BARE_FOLLOW_STATE", "/nonexistent"))
_lock = threading.Lock()
_pages: dict[str, list] = {}  # session id -> [fragment id, the state it drew]
_watcher: threading.Thread | None = None


def state() -> dict:
    try:
        return json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {"step": 1, "revealed": []}


def follow(drawn: dict) -> None:
    """This run's session follows the room and drew `drawn`."""
    global _watcher
    session_id, fragment = streamlit_private.session_id(), streamlit_private.fragment_id()
    if session_id is None or not fragment:
        return
    with _lock:
        _pages[session_id] = [fragment, drawn]
        if _watcher is None:
            _watcher = threading.Thread(target=_watch, daemon=True)
            _watcher.start()


def _watch() -> None:
    while True:
        time.sleep(WATCH_SECONDS)
        now = state()
        with _lock:
            pages = list(_pages.items())
        for session_id, page in pages:
            session = streamlit_private.server_session(session_id)
            if session is None:
                with _lock:
                    _pages.pop(session_id, None)
            elif page[1] != now:
                streamlit_private.on_server_loop(session, _wake, session, page, now)


def _wake(session, page: list, now: dict) -> None:
    if page[1] == now or not streamlit_private.session_is_idle(session):
        return
    page[1] = now
    streamlit_private.rerun_fragment(session, page[0])
