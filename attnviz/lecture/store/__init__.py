"""The lecture store: what a class shares across server processes (rooms, the class's answers, uploaded plans,
short links), behind one small interface (base.LectureStore) with two backends:

- memory.MemoryStore: one process's memory, the default for `streamlit run app.py` (nothing to install);
- redis_store.RedisStore: a real Redis server (redis-py), for the class server's several processes.

Streamlit-free: ui/lecture/ reaches it through one store per server process.
"""

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
           "StoreUnavailable", "WrongKey"]
