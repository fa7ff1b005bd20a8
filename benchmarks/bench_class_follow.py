"""A class that follows a lecture and answers, on the class server: deploy/class_server.py with N processes behind
HAProxy and its redis-server, S students over Streamlit's websocket (deploy/streamlit_client.Tab: a tab that runs
fragments on their timers and follows the pages' navigation, as a browser would), one projector.

    python benchmarks/bench_class_follow.py                        # 120 students, 2 processes, 5 steps
    python benchmarks/bench_class_follow.py --students 40 --no-kill --floor
    python benchmarks/bench_class_follow.py --students 120 --no-kill --lectures 3   # a day of classes

The lecture (benchmarks/class_follow_plan.toml: 5 predict-first steps, each with a question) is put in the class
server's store, and a room is made there; the lecturer's Next and Reveal are the store's calls that the presenter
notes make (go_to, reveal). Each student opens /follow?room=<code>, follows the room's step, answers 1-8 s after the
whole class has the step (a tap on a token or an option, or a number) and keeps following through the 5 steps (the
benchmark plays the lecture: classes class_follow_lecture.py). The projector's page (the lecturer's link) shows the
answer count.

Prints, against the issue's targets:
- answers confirmed to a student (its page said "Your answer is in") and not in the store: target 0;
- the seconds from a step's last answer sent to the projector's count showing every answer kept: target <= 2 s;
- follower latency from Next to the new step's page drawn (p50/p95/max): target p95 <= 3 s;
- what one Next and one Reveal cost the server: CPU-seconds per follower (the Streamlit processes; HAProxy and Redis
  beside), from the lecturer's call until every follower has drawn it (the projector's own redraw included);
- the server CPU (the Streamlit processes, HAProxy and Redis) while every student idles on a step, in cores:
  target <= 0.1;
- with a process SIGKILLed during step 5's question: answers lost (target 0) and the seconds from the loss to each
  of its students' page drawn again (target <= 10 s).

--floor: the same class first follows a bare follower (benchmarks/bare_follow_app.py: a fragment that draws a step's
bar, question, answer box and a line, woken as a room's pages are) on as many plain Streamlit processes, with the same
Next and Reveal: Streamlit's own floor beside the app's figures.

--lectures L: L lectures one after another on the same class server, each with a new room and new students who join
and leave; each process's memory (and, where the app writes them, its rooms followed, sessions, threads and caches)
after each: a day of classes must come back to its first lecture's memory within 10 %, with nothing left behind.

The students run in this process, on the same machine: they take CPU from the server's cores (on a small machine
this makes every figure worse, not better). Only 127.0.0.1; every wait is bounded; SIGTERM ends the class server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import tempfile
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

from class_follow_lecture import ROOT, Room, lecture, quantiles, rss_mb
from class_server import store_password
from class_server_helpers import ClassServer
from streamlit_servers import free_port, start_streamlit

from attnviz.lecture import parse_plan, step_link
from attnviz.lecture.store.redis_store import RedisStore

PLAN = ROOT / "benchmarks" / "class_follow_plan.toml"
PAGES = {"": "Explorer", "step_by_step": "Step by step", "masks_lab": "Masks lab", "scaling_lab": "Scaling lab"}
STATS = "ATTNVIZ_STATS_FOLDER"  # where each process writes what it holds (ui/server_stats.py), for --lectures
SESSION_TTL_S = 120  # Streamlit keeps a disconnected session this long for its browser to come back (its default)


def bench(n: int, replicas: int, kill: bool, lectures: int, logs: Path) -> list[tuple[dict, dict]]:
    """The class on the class server: each lecture's figures and each process's memory and holdings after it."""
    secret, port = secrets.token_hex(32), free_port()
    logs.mkdir(parents=True, exist_ok=True)
    stats = logs / "stats"
    stats.mkdir(exist_ok=True)
    t0 = time.monotonic()
    server = ClassServer(replicas, port, logs, env={"STREAMLIT_SERVER_COOKIE_SECRET": secret, STATS: str(stats)})
    results = []
    try:
        server.wait_for(rf"^ready http://127\.0\.0\.1:{port}/$", timeout=300)
        print(f"class server ready in {time.monotonic() - t0:.0f} s; memory per process: "
              + ", ".join(f"{rss_mb(pid):.0f} MB" for pid in server.pids().values()), flush=True)
        redis_port, redis_pid = server.redis()
        haproxy_pid = int(re.search(r"pid (\d+)", next(s for s in server.seen if s.startswith("haproxy")))[1])
        store = RedisStore(f"redis://:{store_password(secret)}@127.0.0.1:{redis_port}/0")
        data = PLAN.read_bytes()
        plan = parse_plan(data, PAGES)
        for number in range(lectures):
            plan_id = "u" + secrets.token_hex(5)
            store.put_plan(plan_id, data)
            code, key = store.create_room(plan_id)
            server.lines_so_far()
            pids = list(server.pids().values())
            room = Room(code, [f"/follow?room={code}"], lambda k, c=code, p=key: store.go_to(c, p, k),
                        lambda k, c=code, p=key: store.reveal(c, p, k),
                        lambda k, c=code, p=key: {a.session: a.value for a in store.answers(c, k, p)},
                        step_link(plan.step(1), lecture=plan_id, number=1, room=code, key=key, present=True),
                        len(plan.steps), pids, [haproxy_pid, redis_pid])
            last = number == lectures - 1
            figures = asyncio.run(lecture(f"http://127.0.0.1:{port}", room, n,
                                          pids[0] if kill and last else None, idle=number == 0))
            time.sleep(10)  # the students' tabs are closed: their sessions go, the watcher forgets them
            server.lines_so_far()  # a process killed and started again: its new pid
            held = {pid: {**read_stats(stats, pid), "rss_mb": rss_mb(pid)} for pid in server.pids().values()}
            results.append((figures, held))
            print(f"lecture {number + 1} of {lectures} done; " + "; ".join(
                f"process {pid}: " + holding(h) for pid, h in held.items()), flush=True)
        if lectures > 1:  # the day is over: once Streamlit lets the last class's disconnected sessions go
            time.sleep(SESSION_TTL_S + 15)
            server.lines_so_far()
            held = {pid: {**read_stats(stats, pid), "rss_mb": rss_mb(pid)} for pid in server.pids().values()}
            results.append(({}, held))
            print(f"{SESSION_TTL_S + 15} s after the last lecture; " + "; ".join(
                f"process {pid}: " + holding(h) for pid, h in held.items()), flush=True)
        store.close()
    finally:
        server.stop()
    return results


def holding(held: dict) -> str:
    """A process's memory and holdings on one line (its threads by name: where a thread is left, its name says it)."""
    return ", ".join(f"{k} {v:.0f}" if isinstance(v, float) else f"{k} {v}" for k, v in held.items()
                     if k != "thread_names") + f"; threads by name {held.get('thread_names', {})}"


def read_stats(folder: Path, pid: int) -> dict:
    """What a process says it holds (ui/server_stats.py), {} where it wrote nothing."""
    try:
        return json.loads((folder / f"{pid}.json").read_text())
    except (OSError, ValueError):
        return {}


def floor(n: int, replicas: int, steps: int, logs: Path) -> dict:
    """The same class following the bare follower (bare_follow_app.py) on `replicas` plain Streamlit processes."""
    state = logs / "bare_follow_state.json"
    state.write_text(json.dumps({"step": 1, "revealed": []}))
    os.environ["BARE_FOLLOW_STATE"] = str(state)
    servers = [start_streamlit(script="benchmarks/bare_follow_app.py") for _ in range(replicas)]
    revealed: list[int] = []

    def go_to(k: int) -> None:
        state.write_text(json.dumps({"step": k, "revealed": revealed}))

    def reveal(k: int) -> None:
        revealed.append(k)
        state.write_text(json.dumps({"step": k, "revealed": revealed}))

    try:
        # each student on one process, as the balancer spreads them (its links: the processes' own addresses)
        room = Room("FLOOR", [f"{url}/?room=FLOOR" for _, url in servers], go_to, reveal, steps=steps,
                    streamlit_pids=[url.pid for _, url in servers])
        return asyncio.run(lecture(servers[0][1], room, n, idle=False))
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(30)


def per_follower(figures: dict, what: str) -> tuple[list[float], list[float]]:
    """CPU-seconds per follower of each step's Next (or Reveal): the Streamlit processes', and HAProxy's and Redis's."""
    pairs = [f[what] for f in figures["steps"].values() if what in f and not f.get("killed")]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def cpu_line(figures: dict, what: str) -> str:
    streamlit, others = per_follower(figures, what)
    if not streamlit:
        return "none"
    return (f"{sum(streamlit) / len(streamlit) * 1000:.1f} ms of the Streamlit processes' CPU per follower (each step: "
            + ", ".join(f"{s * 1000:.1f}" for s in streamlit) + f"), {sum(others) / len(others) * 1000:.1f} ms "
            "HAProxy and Redis")


def report(figures: dict, n: int, replicas: int, floor_figures: dict | None) -> None:
    print(f"\n{n} students following a 5-step lecture on {replicas} Streamlit process(es) behind HAProxy, with the "
          f"class server's Redis; {os.cpu_count()} CPU(s), students in this process; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    errors = figures["errors"] + figures["projector_errors"]
    print(f"errors drawn or raised: {len(errors)}")
    for e in errors[:6]:
        print("   ", e)
    failed = figures["failed_loads"]
    print(f"page loads that failed and were tried again (as the frontend reconnects): {len(failed)}"
          + (f", e.g. {failed[0]}" if failed else ""))
    latencies, lags = [], []
    for number, f in figures["steps"].items():
        lag = f["count_lag"]
        print(f"step {number}: {f['arrived']}/{n} arrived"
              + (f", Next -> drawn {quantiles(f['latencies'])} s" if f["latencies"] else "")
              + (f", Reveal -> drawn {quantiles(f['reveal_latencies'])} s" if f.get("reveal_latencies") else "")
              + f"; answers sent {f['sent']}, confirmed on the student's page {f['acked']}, kept {f.get('kept', '-')}"
              + f"; answered {quantiles(f['answer_after_start'])} s after the page was drawn"
              + (f"; projector's count complete {lag:.2f} s after the last answer was sent" if lag is not None else
                 "; the projector's count never showed every answer within 10 s"))
        for line in (f["unconfirmed"][:2] + f["unsent"][:2]):
            print("   not confirmed or not sent:", line[:300])
        if f.get("killed"):
            print(f"   a process SIGKILLed 2 s into the question: {len(f['back_after'])} students lost their "
                  f"connection, drawn again after {quantiles(f['back_after'])} s; {f['lost_students']} never back")
        else:
            latencies += f["latencies"]
        if lag is not None:
            lags.append(lag)
    print(f"\nanswers confirmed to a student but not kept: {len(figures['lost'])} (target 0)")
    print(f"Next -> every follower's new step drawn, steps without a kill: {quantiles(latencies)} s "
          "(target p95 <= 3)")
    print(f"projector's count complete after the last answer was sent: worst {max(lags, default=float('nan')):.2f} s "
          "(target <= 2)")
    if "idle_cores" in figures:
        cores = figures["idle_cores"]
        print(f"server CPU with {n} idle followers: {cores:.2f} cores (target <= 0.1)")
    print(f"a Next: {cpu_line(figures, 'next_cpu')}")
    print(f"a Reveal: {cpu_line(figures, 'reveal_cpu')}")
    if floor_figures is not None:
        bare = [x for f in floor_figures["steps"].values() for x in f["latencies"]]
        print(f"\nthe floor (benchmarks/bare_follow_app.py, {replicas} plain Streamlit process(es), the same class): "
              f"Next -> drawn {quantiles(bare)} s; errors {len(floor_figures['errors'])}")
        print(f"   a Next: {cpu_line(floor_figures, 'next_cpu')}")
        print(f"   a Reveal: {cpu_line(floor_figures, 'reveal_cpu')}")


def report_day(results: list[tuple[dict, dict]]) -> None:
    """Each process's memory after each lecture, against the first's, and what it still holds."""
    if len(results) < 2:
        return
    print("\na day of classes: each process after each lecture (target: memory within 10 % of the first lecture's, "
          "no room followed, session or thread left behind)")
    first = results[0][1]
    for number, (figures, held) in enumerate(results, start=1):
        when = f"lecture {number}" if figures else f"{SESSION_TTL_S + 15} s later"
        for pid, h in held.items():
            base = first.get(pid, {}).get("rss_mb")
            grow = f" ({(h['rss_mb'] / base - 1) * 100:+.1f} % of lecture 1's)" if base else ""
            rest = holding({k: v for k, v in h.items() if k != "rss_mb"})
            print(f"   {when}, process {pid}: {h['rss_mb']:.0f} MB{grow}; {rest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=120)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--no-kill", action="store_true", help="no process killed during the last lecture's step 5")
    parser.add_argument("--floor", action="store_true", help="first the same class on a bare follower: the floor")
    parser.add_argument("--lectures", type=int, default=1, help="lectures one after another (a day of classes)")
    parser.add_argument("--logs", default="", help="keep the class server's logs here (default: a temporary folder)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="attnviz-bench-") as tmp:
        logs = Path(args.logs or tmp)
        logs.mkdir(parents=True, exist_ok=True)
        floor_figures = floor(args.students, args.replicas, 5, logs) if args.floor else None
        results = bench(args.students, args.replicas, not args.no_kill, args.lectures, logs)
    for number, (figures, _) in enumerate(results, start=1):
        if not figures:  # the day's last reading, after the lectures
            continue
        if len(results) > 1:
            print(f"\n=== lecture {number}")
        report(figures, args.students, args.replicas, floor_figures if number == 1 else None)
    report_day(results)


if __name__ == "__main__":
    main()
