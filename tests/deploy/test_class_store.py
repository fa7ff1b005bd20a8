"""The class server's lecture store for real: 2 Streamlit processes behind HAProxy and the class server's own
redis-server, on loopback.

- Every process is given the store's address, and what the store holds is seen by both: a short link kept in it
  opens its view on each process (through a page, over Streamlit's websocket).
- redis-server SIGKILLed while students answer: the class server starts it again on its port, and no answer
  acknowledged to a student and no room is lost (append-only, `appendfsync always`); the processes reach it
  again without a restart of their own.

Needs Debian's haproxy and redis-server (tests/install_browser.sh). Only 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import sys
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from browser_helpers import free_port
from class_server_helpers import ROOT, ClassServer, wait_all_ended

from attnviz.lecture.store import StoreError, StoreUnavailable
from attnviz.lecture.store.redis_store import RedisStore

sys.path.insert(0, str(ROOT / "deploy"))
from class_server import store_password
from streamlit_client import PageSession

VIEW = "model=toy&text=Shared+by+every+process.&layer=1"


def open_link(port: int, query: str):
    """One page run on the process at this port (directly, not through the balancer), opened with `query`."""

    async def once():
        session = PageSession(f"http://127.0.0.1:{port}", query)
        await session.open()
        try:
            return await session.rerun(timeout=120)
        finally:
            await session.close()

    return asyncio.run(once())


def assert_opens_the_view(port: int, link_id: str) -> None:
    run = open_link(port, f"v={link_id}")
    assert not run.exceptions, run.exceptions
    assert not [a for a in run.alerts if "short link" in a], run.alerts
    assert run.query == VIEW, run.query  # the process found the id in the shared store and opened its view


class Answering(threading.Thread):
    """Students answering step 1 one after the other (a new session each), until stopped: which answers the store
    acknowledged, and how many it refused (while Redis was down)."""

    def __init__(self, store: RedisStore, code: str):
        super().__init__(daemon=True)
        self.store, self.code = store, code
        self.acknowledged: dict[str, str] = {}
        self.refused = 0
        self.other_errors: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.halt.is_set() and n < 5000:
            n += 1
            session, value = str(uuid.uuid4()), f"token {n % 7}"
            try:
                self.store.answer(self.code, 1, session, value)
                self.acknowledged[session] = value
            except StoreUnavailable:
                self.refused += 1
            except Exception as err:  # any other exception is a defect: reported by the test
                self.other_errors.append(repr(err))
            time.sleep(0.01)


@pytest.mark.timeout(300)
def test_one_store_for_every_process_and_a_killed_redis_loses_nothing(tmp_path):
    for tool in ("haproxy", "redis-server"):
        assert shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists() or Path(f"/usr/bin/{tool}").exists(), \
            f"{tool} is needed: run tests/install_browser.sh"
    secret, port = secrets.token_hex(32), free_port()
    server = ClassServer(2, port, tmp_path, env={"STREAMLIT_SERVER_COOKIE_SECRET": secret})
    started: list[int] = []
    store = None
    try:
        server.wait_for(rf"^ready http://127\.0\.0\.1:{port}/$", timeout=180)
        redis_port, redis_pid = server.redis()
        url = f"redis://:{store_password(secret)}@127.0.0.1:{redis_port}/0"
        started = [*server.pids().values(), redis_pid]
        for pid in server.pids().values():  # each process was given the class server's store
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert f"ATTNVIZ_STORE_URL={url}".encode() in environ
        assert url.split("@")[0].split(":")[-1] not in Path(f"/proc/{redis_pid}/cmdline").read_text()  # no password
        assert (tmp_path / "redis" / "appendonlydir").is_dir()  # its files in the class server's folder

        store = RedisStore(url)
        link_id = store.shorten(VIEW)
        for replica_port in server.ports().values():
            assert_opens_the_view(replica_port, link_id)
        unknown = open_link(server.ports()[1], "v=abcdef1234")
        assert [a for a in unknown.alerts if "unknown or has expired" in a], unknown.alerts

        code, key = store.create_room("attention")
        store.go_to(code, key, 3)
        store.reveal(code, key, 2)
        room = store.room(code)
        students = Answering(store, code)
        students.start()
        time.sleep(1.5)
        os.kill(redis_pid, signal.SIGKILL)
        server.wait_for(r"^redis-server died", timeout=30)
        restarted = server.wait_for(r"^redis port (\d+) pid (\d+)$", timeout=60)
        assert int(restarted[1]) == redis_port and int(restarted[2]) != redis_pid
        started.append(int(restarted[2]))
        time.sleep(1.5)  # students go on answering with the new redis-server
        students.halt.set()
        students.join(30)
        assert not students.other_errors, students.other_errors[:3]
        assert len(students.acknowledged) > 50  # answers before and after the kill
        print(f"answers acknowledged {len(students.acknowledged)}, refused while Redis was down {students.refused}")

        after = store.room(code)  # the room, its step and what was revealed (its version grew with the answers)
        assert replace(after, version=0) == replace(room, version=0) and after.version > room.version
        kept = {a.session: a.value for a in store.answers(code, 1, key)}
        lost = [s for s in students.acknowledged if kept.get(s) != students.acknowledged[s]]
        assert not lost, f"{len(lost)} acknowledged answers lost of {len(students.acknowledged)}"
        assert store.answer_count(code, 1) == len(kept) >= len(students.acknowledged)
        for replica_port in server.ports().values():  # the processes reach the new redis-server by themselves
            assert_opens_the_view(replica_port, link_id)
    finally:
        if store is not None:
            store.close()
        server.stop()
    assert server.proc.returncode == 0
    assert not wait_all_ended(started), "a process the class server started still runs after SIGTERM"


def test_store_password_is_derived_from_the_cookie_secret():
    one, other = store_password("a" * 64), store_password("b" * 64)
    assert one == store_password("a" * 64) and one != other and len(one) == 64
    assert "a" * 16 not in one
    with pytest.raises(StoreError):
        RedisStore("redis://:x@127.0.0.1:1/0").ping()
