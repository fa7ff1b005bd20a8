"""Where an Explorer rerun's server CPU goes, in a real `streamlit run app.py` server.

    python benchmarks/profile_explorer.py                      # CPU-s per rerun, 8 students one after another
    python benchmarks/profile_explorer.py --students 4 --profile /tmp/explorer.prof   # and a cProfile of them

Each student is what bench_class_server.py plays (deploy/streamlit_client.py): a session that opens a shared link
with its own sentence, then makes 4 edits (text, scaling, mask, text). Here the students come one after another,
so each rerun has the server to itself: the server's CPU (user + system, all its threads) from the request to 0.3 s
after the page is drawn is that rerun's cost, whatever else the machine is doing (the figure to judge a change by
on a busy machine; wall times are printed too, but they move with the load). A teacher's first visit warms the
server first (the model load is not a rerun's cost).

--profile: the server runs under cProfile (`python benchmarks/profile_explorer.py --serve ...` wraps
`streamlit run app.py`): every script run (the session's script thread) and every message sent (the event loop's
thread, where Streamlit serialises what a run drew) is profiled, and the merged statistics are written to the
file at the end; the top entries are printed. Profiling slows a run about twofold: read the CPU-s per
rerun from a run without it.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "deploy"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from bench_class import sentence  # noqa: E402
from streamlit_client import PageSession  # noqa: E402
from streamlit_servers import cpu_seconds, free_port  # noqa: E402

EDITS = [("text", "string_value", 1), ("scaled", "bool_value", False), ("mask", "string_value", "causal"),
         ("text", "string_value", 2)]
KINDS = ["open the link", "new text", "scaling off", "mask causal", "new text again"]
SETTLE = 0.3  # seconds after a run's end that still count as its cost (the last messages sent, the session's bookkeeping)


def serve(port: int, out: str, script: str) -> None:
    """The server's side of --profile: streamlit run <script>, with every script run and every message sent profiled;
    SIGUSR2 forgets what was profiled so far, SIGUSR1 writes the merged statistics to `out`."""
    from streamlit.runtime.runtime import Runtime  # noqa: PLC0415 - only in the profiled server's process
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner  # noqa: PLC0415 - idem
    from streamlit.web import cli  # noqa: PLC0415 - idem

    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def profiled(original):
        def call(*args, **kwargs):
            profile = cProfile.Profile(time.thread_time)  # CPU time: a busy machine's waits are not counted
            with lock:
                profiles.append(profile)
            profile.enable()
            try:
                return original(*args, **kwargs)
            finally:
                profile.disable()
        return call

    ScriptRunner._run_script = profiled(ScriptRunner._run_script)
    Runtime._send_message = profiled(Runtime._send_message)

    def forget(*_):  # after the teacher's warming visit
        with lock:
            profiles.clear()

    def dump(*_):
        with lock:
            stats = pstats.Stats(profiles[0])
            for profile in profiles[1:]:
                stats.add(profile)
        stats.dump_stats(out + ".part")
        os.replace(out + ".part", out)

    # Streamlit takes SIGTERM and SIGINT for itself: the two user signals are free
    signal.signal(signal.SIGUSR2, forget)
    signal.signal(signal.SIGUSR1, dump)
    sys.argv = ["streamlit", "run", script, "--server.port", str(port), "--server.headless", "true",
                "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    cli.main()


def start(port: int, profile: str | None, script: str = "app.py") -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    if profile:
        command = [sys.executable, __file__, "--serve", str(port), "--profile", profile, "--script", script]
    else:
        command = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port), "--server.headless",
                   "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not start within 120 s")


async def student(base: str, index: int, pid: int) -> list[tuple[float, float]]:
    """(wall s, server CPU-s) of each of the student's 5 runs."""
    session = PageSession(base, urlencode({"text": sentence(index)}))
    await session.open()
    costs = []
    try:
        for step in range(len(EDITS) + 1):
            if step:
                key, field, value = EDITS[step - 1]
                session.set(key, field, sentence(index, value) if key == "text" else value)
            cpu0 = cpu_seconds(pid)
            run = await session.rerun()
            if run.exceptions:
                raise RuntimeError(f"student {index}: {run.exceptions[0]}")
            await asyncio.sleep(SETTLE)
            costs.append((run.seconds, cpu_seconds(pid) - cpu0))
    finally:
        await session.close()
    return costs


async def lesson(base: str, students: int, pid: int, first: int, profiled: bool) -> list[list[tuple]]:
    """The teacher's page stays open while the students come one after another: with no session left, Streamlit
    forgets the scripts' bytecode (websocket_session_manager.disconnect_session), which a class never sees."""
    teacher = PageSession(base, urlencode({"text": sentence(first - 1)}))
    await teacher.open()
    await teacher.rerun(timeout=300)  # the model, transformers, the first runs: not a student's rerun
    await asyncio.sleep(3.0)  # and what the server's warming thread (ui/warm.py) still does after it
    if profiled:
        os.kill(pid, signal.SIGUSR2)
    sampler = start_sampler(pid)
    try:
        costs = [await student(base, first + i, pid) for i in range(students)]
    finally:
        stop_sampler(sampler)
    await teacher.close()
    return costs


SAMPLES = os.environ.get("PROFILE_EXPLORER_PY_SPY")  # where py-spy's samples go, when it is on the PATH
GIL_ONLY = os.environ.get("PROFILE_EXPLORER_GIL") == "1"  # only the thread holding the GIL: Python's own work


def start_sampler(pid: int) -> subprocess.Popen | None:
    """py-spy sampling the server's threads while the students come (PROFILE_EXPLORER_PY_SPY=file), else None."""
    if not SAMPLES or shutil.which("py-spy") is None:
        return None
    sampler = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--format", "raw", "--rate", "250",
                                "--threads", "--output", SAMPLES, *(["--gil"] if GIL_ONLY else ["--nonblocking"])],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached before the first student
    return sampler


def stop_sampler(sampler: subprocess.Popen | None) -> None:
    if sampler is not None:
        sampler.send_signal(signal.SIGINT)  # py-spy writes its samples and exits
        sampler.wait(60)


def measure(students: int, profile: str | None, script: str = "app.py", first: int = 100) -> list[list[tuple]]:
    """Each student's runs' (wall, CPU-s), one student after another, after a teacher's warming visit."""
    port = free_port()
    proc = start(port, profile, script)
    base = f"http://127.0.0.1:{port}"
    try:
        if profile:
            Path(profile).unlink(missing_ok=True)
        costs = asyncio.run(lesson(base, students, proc.pid, first, bool(profile)))
        if profile:
            proc.send_signal(signal.SIGUSR1)
            deadline = time.time() + 60
            while not Path(profile).exists() and time.time() < deadline:
                time.sleep(0.2)
        return costs
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


# where an idle thread waits: the event loop's select, a pool's queue, a watcher's sleep, a lock
WAITING = ("EpollSelector.select ", "Condition.wait ", "PollingPathWatcher._schedule.<locals>.task ", "_worker ",
           "Queue.get ", "Event.wait ", "TMonitor.run ", "socket.accept ", "Thread.join ", "sleep ")


def sampled_top(path: str, runs: int, top: int) -> None:
    """The top entries of py-spy's samples (raw format: one 'frame;frame;… count' line per stack): per function,
    the share of the busy samples in it or below it (inclusive) and in it alone (self). Samples whose innermost
    frame is a wait (WAITING) are left out: py-spy cannot tell a sleeping thread from a running one here."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    threads: dict[str, int] = {}
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]  # a function, not a line of it
        if frames[-1].startswith(WAITING):  # a thread waiting, which py-spy in a container does not tell apart
            continue
        total += n
        threads[frames[0].split(":")[0]] = threads.get(frames[0].split(":")[0], 0) + n
        for frame in set(frames[1:]):
            inclusive[frame] = inclusive.get(frame, 0) + n
        own[frames[-1]] = own.get(frames[-1], 0) + n
    print(f"py-spy: {total} samples over {runs} runs; by thread: "
          + ", ".join(f"{t} {n / total:.0%}" for t, n in sorted(threads.items(), key=lambda x: -x[1])[:4]))
    for title, table in (("inclusive", inclusive), ("self", own)):
        print(f"  top {top} functions, {title} share of all samples:")
        for frame, n in sorted(table.items(), key=lambda x: -x[1])[:top]:
            print(f"    {n / total:6.1%}  {frame}")


def report(costs: list[list[tuple]]) -> float:
    """Prints the CPU-s and wall of each kind of run; returns the mean CPU-s per run."""
    for k, kind in enumerate(KINDS):
        cpu = [c[k][1] for c in costs]
        wall = [c[k][0] for c in costs]
        print(f"  {kind:15s} CPU-s mean {statistics.fmean(cpu):.3f} (min {min(cpu):.3f}, max {max(cpu):.3f}); "
              f"wall median {statistics.median(wall):.3f} s")
    mean = statistics.fmean(c[1] for s in costs for c in s)
    print(f"  mean over the {len(KINDS)} runs: {mean:.3f} CPU-s per rerun")
    return mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--profile", help="write the cProfile statistics of the server's runs to this file")
    parser.add_argument("--top", type=int, default=30, help="entries of the profile printed")
    parser.add_argument("--script", default="app.py", help="the script served (the floor: benchmarks/bare_explorer_app.py)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the profiled server itself (see serve)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.profile, args.script)
        return
    profile = str(Path(args.profile).resolve()) if args.profile else None  # the server runs in the repository root
    costs = measure(max(1, min(args.students, 50)), profile, args.script)
    print(f"{args.script}: {len(costs)} students one after another (open a link + 4 edits), server CPU per run"
          + (" (under cProfile)" if args.profile else ""))
    report(costs)
    if SAMPLES and Path(SAMPLES).exists():
        sampled_top(SAMPLES, len(costs) * len(KINDS), args.top)
    if args.profile:
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
