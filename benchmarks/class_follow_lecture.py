"""One lecture as benchmarks/bench_class_follow.py plays it: S students (deploy/streamlit_client.Tab) open the follow
link, follow 5 steps, answer each within seconds and are shown the figures at each Reveal, while the lecturer's Next
and Reveal are a Room's calls (the class server's store, or the bare follower's file for the floor). What each step
cost the server's processes is measured around its Next and its Reveal: CPU-seconds per follower, the load of every
student's tab on one change of the room."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "deploy"), str(ROOT / "tests")]

from streamlit_client import Tab  # noqa: E402
from streamlit_servers import cpu_seconds  # noqa: E402

COUNT = re.compile(r"\*\*(\d+)\*\* answers? so far")
ACK = "Your answer is in"
STEP_WAIT = 60.0  # the longest a step's arrivals and answers are waited for
REVEAL_TALK = 10.0  # seconds between a Reveal and the next Next: every follower draws the revealed figures meanwhile


class Student:
    """One student's tab and what happened to it: when it reached each step, what it answered and when it was
    acknowledged (by its anonymous id, the cookie the page set). A student answers 1-8 s after the whole class has
    the step (the answers' runs stay out of the Next's measured CPU)."""

    def __init__(self, base: str, index: int, room: str, link: str):
        self.tab, self.index, self.room, self.link = Tab(base), index, room, link
        self.rng = random.Random(index)
        self.arrived: dict[int, float] = {}  # step -> monotonic time its page was drawn
        self.sent: dict[int, tuple[str, float]] = {}  # step -> (value, when)
        self.acked: dict[int, tuple[str, str, float]] = {}  # step -> (student id, value, when acknowledged)
        self.errors: list[str] = []

    def answer_key(self, step: int) -> str:
        return f"lecture_answer_{self.room}_{step}"

    async def attend(self, delay: float, done: asyncio.Event, opened: dict[int, float]) -> None:
        await asyncio.sleep(delay)
        try:
            await self.tab.load(self.link)
        except Exception as err:
            self.errors.append(f"student {self.index} could not open the follow link: {err!r}")
            return
        due: dict[int, float] = {}
        while not done.is_set():
            await asyncio.sleep(0.1)
            tab = self.tab
            step = tab.bar_step
            if step is None:
                continue
            if step not in self.arrived and (drawn := tab.step_drawn(step)) is not None:
                self.arrived[step] = drawn
            if step not in opened:
                continue
            due.setdefault(step, max(opened[step], self.arrived.get(step, 0.0)) + self.rng.uniform(1.0, 8.0))
            key = self.answer_key(step)
            if step not in self.sent and time.monotonic() >= due[step] and key in tab.widget_ids:
                value = self.choose(key)
                self.sent[step] = (value[1][0] if value[0] == "string_array_value" else value[1], time.monotonic())
                tab.set(key, *value)
                if value[0] == "string_value":  # a number: typed into its form's box, then its Send pressed
                    tab.set(f"{key}_send", "trigger_value", True)
                try:
                    await tab.send()
                except Exception:  # lost: the tab reconnects and the answer is sent again when the box is back
                    del self.sent[step]
            if step in self.sent and step not in self.acked and any(ACK in a for a in tab.step_alerts.get(step, [])):
                sid = tab.cookies.get("_attnviz_student", "")
                self.acked[step] = (sid, self.sent[step][0], time.monotonic())

    def choose(self, key: str) -> tuple[str, object]:
        options = self.tab.options.get(key)
        if options:  # a token or a choice: tap one
            return "string_array_value", [self.rng.choice(options)]
        return "string_value", str(self.rng.choice([16, 64, 256, 256, 1]))  # the number box is a text box


def quantiles(values: list[float]) -> str:
    if not values:
        return "none"
    if len(values) < 2:
        return f"{values[0]:.2f}"
    q = statistics.quantiles(values, n=20, method="inclusive")
    return f"p50 {statistics.median(values):.2f}, p95 {q[18]:.2f}, max {max(values):.2f} (n={len(values)})"


def server_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a killed process's CPU is gone with it
            total += cpu_seconds(pid)
    return total


def rss_mb(pid: int) -> float:
    """A process's resident memory now (Linux /proc), in MB; nan for a process that is gone."""
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Room:
    """What the lecturer does, and where: the class's link and the projector's (None: no projector), Next and Reveal,
    the answers kept (None where nothing keeps them: the floor)."""

    code: str
    links: list[str]  # the follow link on each process (one: the balancer's)
    go_to: object  # (number) -> None
    reveal: object  # (number) -> None
    kept: object = None  # (number) -> {student id: value}
    projector: str | None = None
    steps: int = 5
    streamlit_pids: list[int] = field(default_factory=list)  # the Streamlit processes (CPU per follower)
    other_pids: list[int] = field(default_factory=list)  # HAProxy, Redis


async def wait_until(condition, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.1)
    return condition()


async def lecture(base: str, room: Room, n: int, kill_pid: int | None = None, idle: bool = True) -> dict:
    """Play the lecture with n students; its figures (see bench_class_follow.report)."""
    students = [Student(base, i, room.code, room.links[i % len(room.links)]) for i in range(n)]
    projector = Tab(base) if room.projector else None
    done = asyncio.Event()
    opened: dict[int, float] = {}  # step -> when the class's answers open (the whole class has the step)
    figures: dict = {"steps": {}}
    if projector is not None:
        await projector.load(room.projector)
    # a class arrives over ~6 s
    attending = [asyncio.create_task(s.attend(0.05 * i, done, opened)) for i, s in enumerate(students)]

    def cpu() -> tuple[float, float]:
        return server_cpu(room.streamlit_pids), server_cpu(room.other_pids)

    for number in range(1, room.steps + 1):
        started, cpu0 = time.monotonic(), cpu()
        if number > 1:
            await asyncio.to_thread(room.go_to, number)
        arrived = await wait_until(lambda k=number: all(k in s.arrived for s in students), STEP_WAIT)
        cpu1 = cpu()
        opened[number] = time.monotonic()
        latencies = [s.arrived[number] - started for s in students if number in s.arrived] if number > 1 else []
        f = figures["steps"][number] = {"arrived": sum(number in s.arrived for s in students), "latencies": latencies,
                                        "all_arrived": arrived}
        if number > 1:
            f["next_cpu"] = ((cpu1[0] - cpu0[0]) / n, (cpu1[1] - cpu0[1]) / n)
        killed_at = None
        if number == room.steps and kill_pid is not None:
            await asyncio.sleep(2.0)  # during the question: some have answered, some not yet
            os.kill(kill_pid, signal.SIGKILL)
            killed_at = time.monotonic()
        await wait_until(lambda k=number: all(k in s.acked for s in students), STEP_WAIT)
        acked = [s.acked[number] for s in students if number in s.acked]
        last_sent = max((s.sent[number][1] for s in students if number in s.sent), default=None)
        f.update(acked=len(acked), sent=sum(number in s.sent for s in students),
                 unconfirmed=[f"student {s.index}: alerts {s.tab.alerts[-3:]}, widgets {sorted(s.tab.widget_ids)[:6]}"
                              for s in students if number in s.sent and number not in s.acked],
                 unsent=[f"student {s.index}: path {s.tab.path}, alerts {s.tab.alerts[-3:]}"
                         for s in students if number not in s.sent],
                 answer_after_start=[a[2] - s.arrived[number] for s in students
                                     if number in s.acked and number in s.arrived for a in [s.acked[number]]],
                 count_lag=None)
        if room.kept is not None and projector is not None:
            # the projector's count showing every answer the store holds, and when it first did, from the last
            # answer sent (a student's tap: the store keeps it a little later, so this is an upper bound)
            total = len(await asyncio.to_thread(room.kept, number))
            await wait_until(lambda t=total: any(int(m[1]) >= t for _, body in projector.texts
                                                 if (m := COUNT.search(body))), 10)
            shown = [t for t, body in projector.texts if (m := COUNT.search(body)) and int(m[1]) >= total]
            f["count_lag"] = (min(shown) - last_sent) if shown and last_sent else None
        if killed_at is not None:
            await wait_until(lambda: all(s.tab.lost_at is None for s in students), 60)
            f["killed"] = True
            f["back_after"] = [b for s in students for b in s.tab.back_after]
            f["lost_students"] = sum(s.tab.lost_at is not None for s in students)
        if idle and (number == room.steps - 1 or (number == room.steps and kill_pid is None)):
            # idle: every student has answered and waits on the step: what their following costs the server
            await asyncio.sleep(5)
            cpu0, t0 = server_cpu(room.streamlit_pids + room.other_pids), time.monotonic()
            await asyncio.sleep(15)
            figures["idle_cores"] = (server_cpu(room.streamlit_pids + room.other_pids) - cpu0) / (time.monotonic() - t0)
        if number < room.steps:
            revealed_at, cpu0 = time.monotonic(), cpu()
            await asyncio.to_thread(room.reveal, number)
            drawn = await wait_until(lambda k=number, t=revealed_at: all(s.tab.step_drawn(k, t) for s in students), 30)
            cpu1 = cpu()
            f["reveal_cpu"] = ((cpu1[0] - cpu0[0]) / n, (cpu1[1] - cpu0[1]) / n)
            f["reveal_latencies"] = [t - revealed_at for s in students if (t := s.tab.step_drawn(number, revealed_at))]
            f["reveal_all"] = drawn
            # the figures come (every follower draws them); the lecturer talks
            await asyncio.sleep(max(REVEAL_TALK - (time.monotonic() - revealed_at), 0))
    done.set()
    await asyncio.gather(*attending)
    lost = []
    for number in range(1, room.steps + 1):
        if room.kept is None:
            continue
        kept = await asyncio.to_thread(room.kept, number)  # what the store kept against what was acknowledged
        lost += [(s.index, number, s.acked[number][1]) for s in students
                 if number in s.acked and s.acked[number][0] not in kept]
        figures["steps"][number]["kept"] = len(kept)
    figures["lost"] = lost
    figures["errors"] = [e for s in students for e in s.errors] + [e for s in students for e in s.tab.exceptions]
    figures["projector_errors"] = projector.exceptions if projector is not None else []
    figures["failed_loads"] = [f for s in students for f in s.tab.failed_loads] + (
        projector.failed_loads if projector is not None else [])
    for s in students:
        await s.tab.close()
    if projector is not None:
        await projector.close()
    return figures
