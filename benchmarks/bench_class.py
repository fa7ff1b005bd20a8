"""A class on one server: N sessions over Streamlit's own websocket, each opening a link with its own
sentence and making 4 edits (text, scaling, mask, text) 1 s apart.

    python benchmarks/bench_class.py                 # 30 sessions; prints errors, p50/p95 s per rerun, peak RSS
    python benchmarks/bench_class.py --sessions 10
    python benchmarks/bench_class.py --profile text  # where one rerun's CPU goes (cProfile; or --profile toggle)
    python benchmarks/bench_class.py --cold --sessions 20     # a fresh server: the class arrives at once

--cold: a fresh `streamlit run app.py` with a lecturer's tab opened as it starts and left open (the browser `streamlit
run` opens on a lecturer's machine: the default page, or --first-page lecture), and the whole class opening its links
at once --after seconds from the start (default 20: the lecturer shows the link); --unopened: nobody opens a page
before the class (the server warms its default model from its start either way, ui/at_start.py); --after 0
--unopened: the class is the server's very first visitors, the moment it answers.
Target (issue 47): p95 <= 3 s.

Each session speaks the browser's protocol (BackMsg rerun_script with the link's query string and the
widget values it changed; ForwardMsg deltas until script_finished), so the figures are the server's:
no browser draws anything. Only 127.0.0.1; every loop is bounded; the server is stopped at the end.
Targets (issue 7): 0 errors, p95 <= 2 s per rerun, server memory <= 1 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.testing.v1 import AppTest

os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


from browser_helpers import cpu_seconds, free_port  # noqa: E402

WORDS = ["the", "cat", "dog", "bird", "sat", "ran", "flew", "on", "under", "over", "a", "mat", "road", "tree",
         "because", "it", "was", "tired", "happy", "late"]
RERUN_TIMEOUT = 120.0  # seconds a rerun may take before it counts as an error


def sentence(i: int, edit: int = 0) -> str:
    """A different sentence per session (and per edit), 9 to 14 words."""
    n = 9 + (i + edit) % 6
    return " ".join(WORDS[(i * 7 + edit * 3 + k * 5) % len(WORDS)] for k in range(n)).capitalize() + "."


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants (from /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                children = (task / "children").read_text().split()
                todo += [int(c) for c in children]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


class MemoryWatch(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid))
            self.stop.wait(0.2)


def start_server(port: int) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    log = open(ROOT / "test-artifacts" / f"bench-class-{port}.log", "w")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not start within 90 s")



@contextlib.contextmanager
def watched(proc: subprocess.Popen):
    """The server's memory watched (the watch: its .peak) while the class runs; the server stopped after it."""
    watch = MemoryWatch(proc.pid)
    watch.start()
    try:
        yield watch
    finally:
        watch.stop.set()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()

class Session:
    """One student: a websocket to the server, the widget values it has set, the reruns it timed."""

    def __init__(self, port: int, index: int):
        self.port, self.index = port, index
        self.widget_ids: dict[str, str] = {}  # widget key -> its id, from the deltas
        self.states: dict[str, tuple[str, object]] = {}  # widget id -> (value field, value) we have set
        self.times: list[float] = []
        self.errors: list[str] = []

    async def rerun(self, ws, query: str) -> None:
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_script_hash = ""
        for wid, (field, value) in self.states.items():
            w = msg.rerun_script.widget_states.widgets.add()
            w.id = wid
            setattr(w, field, value)
        start = time.perf_counter()
        await ws.send(msg.SerializeToString())
        while True:
            raw = await asyncio.wait_for(ws.recv(), timeout=RERUN_TIMEOUT)
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                name = element.WhichOneof("type")
                if name == "exception":
                    self.errors.append(f"session {self.index}: exception {element.exception.message[:120]}")
                widget = getattr(element, name, None)
                wid = getattr(widget, "id", "")
                if wid.startswith("$$ID-"):
                    self.widget_ids[wid.rsplit("-", 1)[-1]] = wid
            elif kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    self.errors.append(f"session {self.index}: compile error")
                self.times.append(time.perf_counter() - start)
                return

    def set(self, key: str, field: str, value) -> None:
        wid = self.widget_ids.get(key)
        if wid is None:
            self.errors.append(f"session {self.index}: no widget '{key}' on the page")
            return
        self.states[wid] = (field, value)

    async def run(self, delay: float) -> None:
        await asyncio.sleep(delay)
        link = urlencode({"text": sentence(self.index)})
        try:
            async with websockets.connect(f"ws://127.0.0.1:{self.port}/_stcore/stream", subprotocols=["streamlit"],
                                          max_size=None, open_timeout=60) as ws:
                await self.rerun(ws, link)  # opening the shared link
                edits = [("text", "string_value", sentence(self.index, 1)), ("scaled", "bool_value", False),
                         ("mask", "string_value", "causal"), ("text", "string_value", sentence(self.index, 2))]
                for key, field, value in edits:
                    await asyncio.sleep(1.0)
                    self.set(key, field, value)
                    await self.rerun(ws, link)
        except Exception as err:  # a refused connection or a timeout is an error of the run, reported below
            self.errors.append(f"session {self.index}: {type(err).__name__}: {err}")


async def class_of(port: int, n: int, apart: float = 0.1) -> list[Session]:
    sessions = [Session(port, i) for i in range(n)]
    await asyncio.gather(*(s.run(apart * i) for i, s in enumerate(sessions)))  # a class opens the link within 3 s
    return sessions


async def lecturer_and_class(port: int, n: int, first_page: str | None, after: float, started: float) -> list[Session]:
    """The lecturer's tab (first_page: a page's url path, "" the default page; None: no tab) opened at once and left
    open, as the browser `streamlit run` opens; the class arrives at once `after` seconds from the server's start."""

    async def lecturer() -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=None, open_timeout=60) as ws:
            msg = BackMsg()
            msg.rerun_script.query_string = ""
            msg.rerun_script.page_script_hash = ""
            msg.rerun_script.page_name = first_page
            await ws.send(msg.SerializeToString())
            with contextlib.suppress(Exception):  # drawn or not, the tab stays open until the class has left
                while True:
                    await ws.recv()

    tab = asyncio.create_task(lecturer()) if first_page is not None else None
    await asyncio.sleep(max(after - (time.perf_counter() - started), 0.0))
    sessions = await class_of(port, n, apart=0.0)
    if tab is not None:
        tab.cancel()
    return sessions


def cold(n: int, after: float, first_page: str | None) -> None:
    port = free_port()
    started = time.perf_counter()
    proc = start_server(port)
    up = time.perf_counter() - started
    with watched(proc) as watch:
        cpu0 = cpu_seconds(proc.pid)
        sessions = asyncio.run(lecturer_and_class(port, n, first_page, after, started))
        cpu = cpu_seconds(proc.pid) - cpu0
        wall = time.perf_counter() - started - after
    errors = [e for s in sessions for e in s.errors]
    firsts = sorted(s.times[0] for s in sessions if s.times)
    edits = sorted(t for s in sessions for t in s.times[1:])
    print(f"a fresh `streamlit run app.py` (health check answered {up:.1f} s after the start), "
          + ("opened by nobody before the class, " if first_page is None
             else f"a lecturer's tab on {'/' + first_page if first_page else 'the default page'} from the start, ")
          + f"{n} sessions at once {after:.0f} s after the start, each opening a link + 4 edits 1 s apart; "
          f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}")
    print(f"errors: {len(errors)}")
    for e in errors[:10]:
        print("  ", e)
    print(f"seconds per rerun: all {quantiles(sorted(firsts + edits))}   (target: p95 <= 3 s)")
    print(f"   the first visits {quantiles(firsts)}; the edits {quantiles(edits)}")
    print(f"server CPU from the start to the class's end: {cpu:.1f} s (the warming included); the class took "
          f"{wall:.1f} s; server peak RSS {watch.peak / 2**30:.2f} GB")


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return f"{values}"
    q = statistics.quantiles(values, n=20)
    return f"p50 {statistics.median(values):.2f}, p95 {q[18]:.2f}, max {max(values):.2f}"


def load(n: int) -> None:
    port = free_port()
    proc = start_server(port)
    with watched(proc) as watch:
        warm = asyncio.run(class_of(port, 1))  # the teacher's own first visit loads the model
        t0, cpu0 = time.perf_counter(), cpu_seconds(proc.pid)
        sessions = asyncio.run(class_of(port, n))
        wall, cpu = time.perf_counter() - t0, cpu_seconds(proc.pid) - cpu0
    times = sorted(t for s in sessions for t in s.times)
    errors = [e for s in warm + sessions for e in s.errors]
    print(f"{n} sessions x (open a link + 4 edits 1 s apart) on one `streamlit run app.py`, {os.cpu_count()} CPU(s)")
    print(f"errors: {len(errors)}")
    for e in errors[:10]:
        print("  ", e)
    if len(times) >= 2:
        q = statistics.quantiles(times, n=20)
        print(f"reruns timed: {len(times)} of {5 * n}; seconds per rerun p50 {statistics.median(times):.2f}, "
              f"p95 {q[18]:.2f}, max {times[-1]:.2f}   (targets: 0 errors, p95 <= 2 s)")
    print(f"first visit (model load) {warm[0].times[0] if warm[0].times else float('nan'):.1f} s; "
          f"whole class {wall:.1f} s; server peak RSS {watch.peak / 2**30:.2f} GB (target <= 1 GB)")
    print(f"server CPU over the class: {cpu:.1f} s ({cpu / max(len(times), 1) * 1000:.0f} ms per rerun timed)")


def profile_one_rerun(edit: str = "toggle", top: int = 22) -> None:
    """cProfile of one explorer rerun after a scaling toggle (or a new sentence: edit="text"), in-process
    with AppTest (the same script, run on Streamlit's script thread, where the profiler is switched on)."""

    prof, profiling = cProfile.Profile(), {"on": False}
    original = ScriptRunner._run_script

    def profiled(self, rerun_data):
        if not profiling["on"]:
            return original(self, rerun_data)
        prof.enable()
        try:
            return original(self, rerun_data)
        finally:
            prof.disable()

    ScriptRunner._run_script = profiled
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["text"] = sentence(3)
    at.run()
    at.toggle(key="scaled").set_value(False).run()  # warm: this run's model output is now cached too
    at.run()  # the toggle reran the explorer's parts only, whose elements are all AppTest now holds: the whole page again
    if edit == "text":
        at.text_area(key="text").set_value(sentence(4))
    else:
        at.toggle(key="scaled").set_value(True)
    profiling["on"] = True
    t0 = time.perf_counter()
    at.run()
    profiling["on"] = False
    what = "a new sentence" if edit == "text" else "scaling toggled back, model output cached"
    print(f"one explorer rerun ({what}): {time.perf_counter() - t0:.3f} s wall")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--profile", choices=["toggle", "text"], help="profile one rerun after this edit")
    parser.add_argument("--cold", action="store_true", help="a fresh server; the class arrives at once (see above)")
    parser.add_argument("--after", type=float, default=20.0, help="--cold: seconds from the start to the class")
    parser.add_argument("--first-page", default="", help="--cold: the page the lecturer's tab opens at the start, by "
                                                         "its url path (default: the default page; lecture: the Lecture page)")
    parser.add_argument("--unopened", action="store_true", help="--cold: nobody opens the page before the class")
    args = parser.parse_args()
    if args.cold:
        cold(max(1, min(args.sessions, 100)), max(args.after, 0.0), None if args.unopened else args.first_page)
    elif args.profile:
        profile_one_rerun(args.profile)
    else:
        load(max(1, min(args.sessions, 100)))


if __name__ == "__main__":
    main()
