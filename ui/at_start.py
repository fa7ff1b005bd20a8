"""What a server does at its start, before anyone opens a page: app.py's st.App lifespan.

`streamlit run app.py` serves the st.App that app.py makes (Streamlit finds it in the source) and runs this lifespan
once the port is bound: the default model starts warming at once (ui/warm.py), so a class that opens its links a
few seconds later finds it loaded. A script without st.App warmed only from its first page run: 20 students who were
the server's first visitors, 20 s after its start, waited p95 5.8-6.6 s for their first page, against 1.6-1.9 s
warmed from the start (benchmarks/RESULTS.md, "Editing students on the Explorer": "Warmed from the start").

Served that way, `streamlit run` does not open a browser itself (it does for a plain script): the lifespan opens the
app's address as it did, unless the server runs headless (`server.headless`, Streamlit's default on a machine
without a display).
"""

from __future__ import annotations

import contextlib
import logging
import webbrowser
from collections.abc import AsyncIterator

import streamlit as st

from ui.server_stats import start_writing as write_stats_where_asked
from ui.warm import start_warming

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def warm_from_the_start(_app) -> AsyncIterator[None]:
    """st.App's lifespan: the default model warming in its thread, the lecturer's browser opened; nothing at the
    end (the warming thread is a daemon). A benchmark's or a test's stats (ui/server_stats.py) from the start too."""
    write_stats_where_asked()
    start_warming()
    if not st.get_option("server.headless"):
        open_in_a_browser(the_apps_address())
    yield


def the_apps_address() -> str:
    """The address `streamlit run` prints first: this machine, the port bound (Streamlit's next free one when the
    configured port was taken), the base path."""
    base = st.get_option("server.baseUrlPath").strip("/")
    return f"http://localhost:{st.get_option('server.port')}/{base + '/' if base else ''}"


def open_in_a_browser(url: str) -> None:
    """The system's browser at `url`; a machine without one only logs it."""
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        log.info("attnviz: no browser to open %s in", url)
