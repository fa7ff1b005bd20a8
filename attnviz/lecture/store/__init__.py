"""The lecture store: what a class shares across server processes (rooms, the class's answers, uploaded plans,
short links), behind one small interface (base.LectureStore) with two backends:

- memory.MemoryStore: one process's memory, the default for `streamlit run app.py` (nothing to install);
- redis_store.RedisStore: a real Redis server (redis-py), for the class server's several processes.

Streamlit-free: ui/lecture/ reaches it through open_store, one store per server process.
"""

import threading

from attnviz.lecture.store.base import (
    Answer,
    LectureStore,
    LimitReached,
    RoomState,
    StoreError,
    StoreLimits,
    StoreUnavailable,
    WrongKey,
)
from attnviz.lecture.store.memory import MemoryStore

__all__ = ["Answer", "LectureStore", "LimitReached", "MemoryStore", "RoomState", "StoreError", "StoreLimits",
           "StoreUnavailable", "WrongKey", "open_store"]

_OPENED: dict[tuple, LectureStore] = {}
_LOCK = threading.Lock()


def open_store(settings) -> LectureStore:
    """This process's lecture store for these settings (attnviz.server_settings.ServerSettings: store_backend,
    store_url, store_limits): made on the first call, then the same object on every call, so every session of a
    process (and every module that asks) shares one memory store. StoreUnavailable when a Redis URL cannot be used
    (an unreachable Redis is found by the calls, each of which may raise StoreUnavailable)."""
    which = (settings.store_backend, settings.store_url, settings.store_limits)
    with _LOCK:
        if which not in _OPENED:
            if settings.store_backend == "redis":
                from attnviz.lecture.store.redis_store import RedisStore  # noqa: PLC0415 - redis-py only where a Redis is used

                _OPENED[which] = RedisStore(settings.store_url, settings.store_limits)
            else:
                _OPENED[which] = MemoryStore(settings.store_limits)
        return _OPENED[which]
