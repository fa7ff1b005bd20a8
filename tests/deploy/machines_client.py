"""The students' side of tests/deploy/test_class_machines.py, run inside the balancer's network namespace (`ip netns
exec`): it reaches the two "machines" only by their namespace addresses.

    python tests/deploy/machines_client.py <redis url> <balancer url> <balancer admin socket> <process url> <process url>

Prints one JSON line: what each process drew for a short link made in the shared Redis, and for a room's step.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "deploy")]

from streamlit_client import PageSession, Tab  # noqa: E402

from attnviz.lecture.store.redis_store import RedisStore  # noqa: E402

VIEW = "model=toy&text=Seen+on+two+machines.&layer=1"


def healthy(url: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=3) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.5)
    return False


def balancer_sees_all_up(admin_socket: str, names: set[str], within: float) -> bool:
    """Until HAProxy's admin socket reports every one of these servers UP. A process that began listening after the
    balancer's first check is DOWN until two checks a second apart pass: students sent before that all went to the
    other process."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(admin_socket)
            s.sendall(b"show stat\n")
            data = b"".join(iter(lambda: s.recv(65536), b""))
        rows = [line.split(",") for line in data.decode().splitlines() if line and not line.startswith("#")]
        if names <= {row[1] for row in rows if len(row) > 17 and row[17] == "UP"}:
            return True
        time.sleep(0.5)
    return False


async def run_page(url: str, query: str) -> dict:
    session = PageSession(url, query)
    await session.open()
    try:
        run = await session.rerun(timeout=120)
    finally:
        await session.close()
    return {"query": run.query, "alerts": run.alerts, "exceptions": run.exceptions, "cookie": session.cookie}


async def follow(url: str, code: str, within: float = 90) -> dict:
    """/follow?room=<code> on this process: the step its page draws for the student (the room's step, read from
    Redis), from the lecture bar of the runs it drew (the follow link stays open and draws the room's step in place)."""
    tab = Tab(url)
    await tab.load(f"/follow?room={code}")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not tab.bar_runs:
        await asyncio.sleep(0.2)
    await tab.close()
    return {"path": tab.path, "query": tab.query, "exceptions": tab.exceptions,
            "steps": [step for step, _ in tab.bar_runs]}


async def both(runs) -> list:
    return await asyncio.gather(*runs)


def main() -> None:
    redis_url, balancer, admin_socket, *processes = sys.argv[1:]
    ready = {url: healthy(url, 240) for url in [*processes, balancer]}
    ready["both UP in the balancer"] = balancer_sees_all_up(admin_socket, {"ma", "mb"}, 60)
    store = RedisStore(redis_url)
    link_id = store.shorten(VIEW)
    code, key = store.create_room("attention")
    store.go_to(code, key, 4)
    # the two machines' processes at once, as two students open the link at once: each process's first run is a cold
    # one (transformers' import, the model's load), and one after the other left one machine idle while the other ran
    pages = dict(zip(processes, asyncio.run(both(run_page(url, f"v={link_id}") for url in processes)), strict=True))
    through = [asyncio.run(run_page(balancer, f"v={link_id}")) for _ in range(4)]  # one by one: the balancer spreads them
    rooms = dict(zip(processes, asyncio.run(both(follow(url, code) for url in processes)), strict=True))
    print(json.dumps({"ready": ready, "view": VIEW, "pages": pages, "through_balancer": through,
                      "room": [code, store.room(code).step], "rooms": rooms}))
    store.close()


if __name__ == "__main__":
    main()
