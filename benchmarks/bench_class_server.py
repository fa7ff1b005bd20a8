"""A class on the class server: deploy/class_server.py with N processes behind HAProxy, M sessions through it,
each opening a link with its own sentence and making 4 edits (text, scaling, mask, text) 1 s apart; optionally
one process SIGKILLed some seconds in.

    python benchmarks/bench_class_server.py --replicas 2 --sessions 80     # 40 students a core on this machine
    python benchmarks/bench_class_server.py --replicas 1 --sessions 30
    python benchmarks/bench_class_server.py --replicas 2 --sessions 60 --kill-after 8
    python benchmarks/bench_class_server.py --replicas 2 --sessions 20 --apart 0   # a class arriving at once

Prints errors, seconds per rerun (p50/p95/max), the server's CPU-seconds per rerun and the students' side's, each
process's peak memory, and with a kill: how many sessions lost their connection, how many were lost for good (never
drawn again within 60 s), and the seconds from the kill to each one's redraw. Then the same class on a bare script
with the Explorer's widgets and nothing computed (benchmarks/bare_explorer_app.py: Streamlit's own floor; --no-floor
leaves it out), and the students a core with the verdict against the target. Sessions speak Streamlit's websocket
protocol (deploy/streamlit_client.py), so no browser draws anything; they run on the same machine, and take CPU
from the server's cores. Only 127.0.0.1; every wait is bounded; the class server is stopped with SIGTERM at the end.
Targets: issue 50, at least 40 editing students a core at p95 <= 2 s (80 sessions on 2 processes of this 2-core
machine); issue 21, with a process killed 8 s in, 0 sessions lost and p95 <= 10 s from the loss to the redraw.
The p95 moves with whatever else the machine runs: the CPU-seconds per rerun are the figure to compare changes by.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "deploy"), str(ROOT / "benchmarks")]

from bench_class import MemoryWatch, sentence  # noqa: E402
from browser_helpers import free_port  # noqa: E402  (bench_class put tests/ on the path)
from streamlit_client import PageSession  # noqa: E402
from streamlit_servers import cpu_seconds  # noqa: E402

FLOOR = "benchmarks/bare_explorer_app.py"  # the Explorer's widgets, nothing computed: Streamlit's own cost
TARGET_P95, STUDENTS_A_CORE = 2.0, 40  # issue 50: at least 40 editing students a core at p95 <= 2 s
EDITS = [("text", "string_value", 1), ("scaled", "bool_value", False), ("mask", "string_value", "causal"),
         ("text", "string_value", 2)]


class Student:
    """One session: its rerun times, its errors, and (after a kill) when it was drawn again."""

    def __init__(self, url: str, index: int):
        self.index = index
        self.session = PageSession(url, urlencode({"text": sentence(index)}))
        self.times: list[float] = []
        self.errors: list[str] = []
        self.lost_at: float | None = None  # monotonic time its connection was found lost
        self.redrawn_at: float | None = None

    async def draw(self) -> None:
        run = await self.session.rerun()
        self.errors += [f"session {self.index}: {e}" for e in run.exceptions]
        self.times.append(run.seconds)

    async def draw_again(self) -> None:
        """The frontend's way after a lost connection: reconnect through the balancer, run the page again."""
        self.lost_at = self.lost_at or time.monotonic()
        await self.session.reopen(within=60)
        run = await self.session.rerun()
        self.errors += [f"session {self.index} (redraw): {e}" for e in run.exceptions]
        self.redrawn_at = time.monotonic()

    async def attend(self, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            await self.session.open()
            await self.draw()
            for key, field, value in EDITS:
                await asyncio.sleep(1.0)
                self.session.set(key, field, sentence(self.index, value) if key == "text" else value)
                try:
                    await self.draw()
                except Exception:  # the process behind this session died: the frontend reconnects
                    if self.redrawn_at is not None:
                        raise
                    await self.draw_again()
            await self.session.close()
        except Exception as err:  # reported with the figures
            self.errors.append(f"session {self.index}: {type(err).__name__}: {err}")


class ClassServer:
    def __init__(self, replicas: int, port: int, script: str = "app.py"):
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "deploy/class_server.py", "--replicas", str(replicas), "--port",
                                      str(port), "--bind", "127.0.0.1", "--script", script], cwd=ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line.strip()) for line in self.proc.stdout], daemon=True).start()
        self.pids: dict[int, int] = {}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            if m := re.match(r"replica (\d+) port \d+ pid (\d+)", line):
                self.pids[int(m[1])] = int(m[2])
            if line.startswith("ready "):
                self.started = time.monotonic()
                return
        raise RuntimeError("the class server was not ready within 300 s")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def lecture(url: str, n: int, kill: tuple[float, int] | None,
                  apart: float = 0.1) -> tuple[list[Student], float | None]:
    students = [Student(url, i) for i in range(n)]
    killed_at = None

    async def killer() -> None:
        nonlocal killed_at
        delay, pid = kill
        await asyncio.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()

    extra = [killer()] if kill else []
    # a class opens the link within 6 s (0.1 s apart), then edits
    await asyncio.gather(*(s.attend(apart * i) for i, s in enumerate(students)), *extra)
    return students, killed_at


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return f"{values}"
    q = statistics.quantiles(values, n=20)
    return f"p50 {statistics.median(values):.2f}, p95 {q[18]:.2f}, max {max(values):.2f}"


@dataclass
class ClassRun:
    """What one class on the class server measured."""

    script: str
    students: list[Student]
    startup: float  # seconds until the class server said ready (its processes warmed)
    cpu: float  # the processes' CPU-seconds over the class (user + system)
    own_cpu: float  # this process's CPU-seconds over the class: the students' side, on the same cores
    peaks: dict[int, float]  # process index -> peak memory (GB)
    killed_at: float | None = None

    @property
    def times(self) -> list[float]:
        return sorted(t for s in self.students for t in s.times)

    @property
    def errors(self) -> list[str]:
        return [e for s in self.students for e in s.errors]


def one_class(script: str, replicas: int, n: int, kill_after: float | None, apart: float) -> ClassRun:
    port = free_port()
    t0 = time.monotonic()
    server = ClassServer(replicas, port, script)
    startup = time.monotonic() - t0
    watches = {i: MemoryWatch(pid) for i, pid in server.pids.items()}
    for w in watches.values():
        w.start()
    cpu0, own0 = {i: cpu_seconds(pid) for i, pid in server.pids.items()}, time.process_time()
    cpu = 0.0
    try:
        kill = (kill_after, server.pids[0]) if kill_after is not None else None
        students, killed_at = asyncio.run(lecture(f"http://127.0.0.1:{port}", n, kill, apart))
        for i, pid in server.pids.items():
            with contextlib.suppress(OSError):  # a killed process: its CPU is not counted
                cpu += cpu_seconds(pid) - cpu0[i]
    finally:
        for w in watches.values():
            w.stop.set()
        server.stop()
    return ClassRun(script, students, startup, cpu, time.process_time() - own0,
                    {i: w.peak / 2**30 for i, w in watches.items()}, killed_at)


def report(run: ClassRun, n: int, replicas: int, kill_after: float | None) -> None:
    times, errors = run.times, run.errors
    print(f"{run.script}: errors {len(errors)}; reruns timed {len(times)} of {5 * n}; seconds per rerun "
          f"{quantiles(times)}")
    for e in errors[:8]:
        print("  ", e)
    print(f"   the first visits {quantiles(sorted(s.times[0] for s in run.students if s.times))}; the edits "
          f"{quantiles(sorted(t for s in run.students for t in s.times[1:]))}")
    print(f"   server CPU {run.cpu:.1f} s over the class: {run.cpu / max(len(times), 1) * 1000:.0f} ms per rerun; the "
          f"students' side {run.own_cpu:.1f} s; class server ready in {run.startup:.0f} s (processes warmed); peak "
          "memory per process (GB) " + ", ".join(f"{i}: {g:.2f}" for i, g in run.peaks.items())
          + ("  (process 0's before its kill)" if run.killed_at is not None else ""))
    if run.killed_at is not None:
        lost = [s for s in run.students if s.lost_at is not None]
        redrawn = [s.redrawn_at - run.killed_at for s in lost if s.redrawn_at is not None]
        print(f"   process 0 SIGKILLed {kill_after:.0f} s in: {len(lost)} sessions lost their connection, "
              f"{len(lost) - len(redrawn)} never drawn again; seconds from the kill to the redraw "
              f"{quantiles(sorted(redrawn))}")


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[18] if len(times) >= 2 else float("nan")


def bench(replicas: int, n: int, kill_after: float | None, apart: float = 0.1, floor: bool = True) -> None:
    cores = os.cpu_count() or 1
    print(f"{n} sessions x (open a link + 4 edits 1 s apart) on {replicas} process(es) behind HAProxy, {cores} CPU(s), "
          f"load average {os.getloadavg()[0]:.1f} before")
    app = one_class("app.py", replicas, n, kill_after, apart)
    report(app, n, replicas, kill_after)
    if floor and kill_after is None:  # the same class on a bare script with the same widgets: Streamlit's own cost
        bare = one_class(FLOOR, replicas, n, None, apart)
        report(bare, n, replicas, None)
        print(f"   attnviz's rerun costs the server {app.cpu / max(len(app.times), 1) * 1000:.0f} ms of CPU, the floor "
              f"{bare.cpu / max(len(bare.times), 1) * 1000:.0f} ms; p95 {p95(app.times):.2f} s against the floor's "
              f"{p95(bare.times):.2f} s")
    verdict = "meets" if p95(app.times) <= TARGET_P95 and not app.errors else "misses"
    print(f"{n} students on {cores} cores: {n / cores:.0f} a core, p95 {p95(app.times):.2f} s: {verdict} the target "
          f"of {STUDENTS_A_CORE} a core at p95 <= {TARGET_P95:g} s (load average {os.getloadavg()[0]:.1f} after)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--kill-after", type=float, help="SIGKILL process 0 this many seconds after the class starts")
    parser.add_argument("--apart", type=float, default=0.1,
                        help="seconds between two students' arrivals (default 0.1; 0: the whole class at once)")
    parser.add_argument("--no-floor", action="store_true", help="leave out the bare script's class (Streamlit's floor)")
    args = parser.parse_args()
    bench(max(1, min(args.replicas, 8)), max(1, min(args.sessions, 200)), args.kill_after, max(args.apart, 0.0),
          floor=not args.no_floor)


if __name__ == "__main__":
    main()
