"""What this server process holds, written every STATS_SECONDS to <folder>/<pid>.json when the environment names a
folder (ATTNVIZ_STATS_FOLDER; benchmarks/bench_class_follow.py --lectures sets it): a day of classes must leave no
room followed, session, thread or cached view behind, and this is how a benchmark sees it from outside. Nothing is
written otherwise, and nothing here is served to a browser."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

from ui import streamlit_private
from ui.lecture import follower_view, wake
from ui.memo import _CACHES

FOLDER_VARIABLE = "ATTNVIZ_STATS_FOLDER"
STATS_SECONDS = 1.0
_started = False
_lock = threading.Lock()


def holdings() -> dict:
    """Rooms followed here and their pages, Streamlit's sessions (connected, and kept for a reconnection), threads
    (by name, a number at the end dropped), follower views and the shared caches' entries, resident memory (MB)."""
    followed = wake.followed()
    connected, kept = streamlit_private.session_counts()
    names = Counter(t.name.rstrip("0123456789-_ ") or "thread" for t in threading.enumerate())
    return {"rss_mb": round(_rss_mb(), 1), "rooms_followed": len(followed), "pages_following": sum(followed.values()),
            "sessions": connected, "sessions_kept": kept, "threads": sum(names.values()), "thread_names": dict(names),
            "follower_views": follower_view.views_held(), "follower_views_drawn": follower_view.views_drawn(),
            "shared_cache_entries": sum(len(cache) for cache in list(_CACHES.values()))}


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def start_writing() -> None:
    """Once per process, where the environment asks for it: a thread that writes holdings() every STATS_SECONDS."""
    global _started
    folder = os.environ.get(FOLDER_VARIABLE)
    with _lock:
        if not folder or _started:
            return
        _started = True
    threading.Thread(target=_write_forever, args=(Path(folder),), name="attnviz-stats", daemon=True).start()


def _write_forever(folder: Path) -> None:
    target = folder / f"{os.getpid()}.json"
    while True:
        try:
            part = target.with_suffix(".part")
            part.write_text(json.dumps(holdings()), encoding="utf-8")
            part.replace(target)  # whole, never half-written
        except Exception:  # a stats file is never worth a server thread
            pass
        time.sleep(STATS_SECONDS)
