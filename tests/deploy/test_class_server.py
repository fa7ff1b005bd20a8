"""The class server for real: 2 Streamlit processes behind HAProxy on loopback, sessions opened through it over
Streamlit's websocket, one process SIGKILLed: every session is drawn again (those of the dead process after
reconnecting through the balancer), the process is started again, and SIGTERM ends every process.

Needs Debian's haproxy and redis-server (tests/install_browser.sh installs them). Only 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser_helpers import free_port
from class_server_helpers import ROOT, ClassServer, alive

sys.path.insert(0, str(ROOT / "deploy"))
from streamlit_client import PageSession

SESSIONS = 6
STAYS_SECONDS = 3  # a SIGTERMed Streamlit process ends within a second here


def drawn(run) -> None:
    assert not run.exceptions, run.exceptions
    assert run.elements > 20  # a whole explorer page, not an error page
    assert not [a for a in run.alerts if "unavailable" in a], run.alerts  # the truth check ran on a warm process


async def open_class(url: str) -> list[PageSession]:
    sessions = [PageSession(url, urlencode({"text": f"The cat number {i} sat on the mat."})) for i in range(SESSIONS)]
    for s in sessions:  # one after the other, as a class trickles in: leastconn spreads them
        await s.open()
        drawn(await s.rerun())
    return sessions


async def after_the_kill(sessions: list[PageSession], dead: str) -> list[float]:
    """Every session drawn again; a session of the dead process first sees its socket close, then reconnects."""

    async def redraw(s: PageSession) -> float:
        start = time.perf_counter()
        if s.cookie.endswith("=" + dead):
            assert await s.lost(within=30)
            await s.reopen(within=60)
        drawn(await s.rerun())
        return time.perf_counter() - start

    return await asyncio.gather(*(redraw(s) for s in sessions))


@pytest.mark.timeout(240)
def test_a_killed_process_loses_no_session_and_sigterm_ends_everything(tmp_path):
    assert shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists(), "haproxy is needed: run tests/install_browser.sh"
    port = free_port()
    server = ClassServer(2, port, tmp_path)
    first, haproxy_pid = {}, None
    try:
        server.wait_for(rf"^ready http://127\.0\.0\.1:{port}/$", timeout=150)
        haproxy_pid = int(re.search(r"pid (\d+)", next(s for s in server.seen if s.startswith("haproxy"))).group(1))
        first = server.pids()
        assert sorted(first) == [0, 1]

        async def lecture() -> tuple[list[str], list[float]]:
            sessions = await open_class(f"http://127.0.0.1:{port}")
            cookies = [s.cookie.split("=", 1)[1] for s in sessions]
            assert sorted(set(cookies)) == ["p0", "p1"], cookies  # both processes hold students
            os.kill(first[0], signal.SIGKILL)
            seconds = await after_the_kill(sessions, "p0")
            for s in sessions:
                await s.close()
            return cookies, seconds

        cookies, seconds = asyncio.run(lecture())
        assert len(seconds) == SESSIONS and max(seconds) < 60
        restarted = server.wait_for(r"^replica 0 port \d+ pid (\d+)$", timeout=30)
        assert int(restarted[1]) != first[0]
        # and it stays: a process started from the thread that warmed it was sent SIGTERM when that thread ended
        # (PR_SET_PDEATHSIG follows the thread), so the class server restarted it every few seconds
        server.wait_for(r"^replica 0 is back in the balancer$", timeout=120)
        time.sleep(STAYS_SECONDS)
        assert alive(int(restarted[1])), f"the restarted process ended {STAYS_SECONDS} s after it was back"
        server.lines_so_far()
        assert server.pids()[0] == int(restarted[1]), "the restarted process was started again"
    finally:
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(30)
    pids = [*first.values(), *server.pids().values(), haproxy_pid, server.redis()[1]]
    assert None not in pids
    deadline = time.monotonic() + 15
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in pids if alive(p)], f"still running after SIGTERM: {pids}"
    assert server.proc.returncode == 0
