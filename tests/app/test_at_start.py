"""The server's start (ui/at_start.py, app.py's st.App lifespan): on a lecturer's machine (not headless) the app's
address opens in the browser, as `streamlit run` does for a plain script; a headless server opens nothing. The
warming itself is tested on a real server (tests/deploy/test_cold_start.py)."""

import asyncio

import pytest

from ui import at_start

OPTIONS = {"server.port": 8507, "server.baseUrlPath": ""}


@pytest.mark.parametrize(("headless", "base", "opened"), [
    (False, "", ["http://localhost:8507/"]),
    (False, "/class/", ["http://localhost:8507/class/"]),
    (True, "", []),
])
def test_the_start_opens_the_apps_address_unless_headless(monkeypatch, headless, base, opened):
    options = {**OPTIONS, "server.headless": headless, "server.baseUrlPath": base}
    seen, started = [], []
    monkeypatch.setattr(at_start.st, "get_option", options.__getitem__)
    monkeypatch.setattr(at_start.webbrowser, "open", lambda url: seen.append(url) or True)  # no browser here
    monkeypatch.setattr(at_start, "start_warming", lambda: started.append(True))  # a real server's: test_cold_start

    async def start_and_stop():
        async with at_start.warm_from_the_start(None):
            pass

    asyncio.run(start_and_stop())
    assert seen == opened and started == [True]
