"""Python's cyclic garbage collector, tuned once per server process (app.py, after the process's first page).

A server process holds a few million objects that live as long as it does (torch, transformers, Streamlit, the app's
modules, the loaded models). Each full collection walks all of them: 0.15-0.2 s of CPU here, and a class following a
lecture allocates enough for one in every Next of 100 followers (a third of that Next's server CPU, measured with
gc.callbacks in the process). Once the first page is drawn, what is alive is frozen (gc.freeze: never walked again)
and a young collection waits for 10,000 new objects instead of 700, as the test processes do (tests/conftest.py).
Reference counting frees what it always freed; only a reference cycle among objects alive at that moment is no
longer collected, once.
"""

from __future__ import annotations

import gc
import threading

THRESHOLD = (10_000, 10, 10)
_lock = threading.Lock()
_done = False


def freeze_what_is_loaded() -> bool:
    """Once per process: collect, freeze what is alive, raise the young generation's threshold. True the first time."""
    global _done
    with _lock:
        if _done:
            return False
        _done = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLD)
    return True
