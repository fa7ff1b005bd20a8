"""The lecture store of this server process: one per process, shared by every session (rooms, the class's answers,
uploaded plans, short links). The memory store by default (`streamlit run app.py`); the class server's processes
share a Redis one (attnviz.lecture.store).

A store that cannot be reached is said on the lecture's views (store_message); the other pages never ask it.
"""

from __future__ import annotations

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.store import LectureStore, StoreUnavailable, open_store
from ui.access import server_settings


def lecture_store() -> LectureStore:
    """This process's store (made once, from the settings' [store] or the class server's ATTNVIZ_STORE_URL)."""
    return open_store(server_settings())


def store_message(err: AttnvizError, where=st) -> None:
    """A store's problem on screen: unreachable is an error with what to do; anything else (a wrong key, a limit, a
    closed step, a plan that is gone) is a warning worded for the screen."""
    if isinstance(err, StoreUnavailable):
        where.error(f"The lecture's shared store cannot be reached: {err} Following, answers and the room's steps "
                    "are paused; every page of the app still works on its own.", icon=":material/cloud_off:")
    else:
        where.warning(str(err), icon=":material/block:")
