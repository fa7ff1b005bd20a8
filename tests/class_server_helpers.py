"""`python deploy/class_server.py` as a lecturer starts it, for the tests that drive a real class server (tests/deploy,
tests/browser): its printed lines read as they come, every wait bounded, loopback only."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLICA = re.compile(r"^replica (\d+) port (\d+) pid (\d+)$")
REDIS = re.compile(r"^redis port (\d+) pid (\d+)$")


class ClassServer:
    """The class server with `replicas` processes on `port` (127.0.0.1), logs in `logs`; env: added variables."""

    def __init__(self, replicas: int, port: int, logs: Path, env: dict | None = None):
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "deploy/class_server.py", "--replicas", str(replicas), "--port",
                                      str(port), "--bind", "127.0.0.1", "--logs", str(logs)],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            self.seen.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s; printed:\n" + "\n".join(self.seen))

    def lines_so_far(self) -> None:
        """Take in every line printed until now (pids(), ports() and redis() read those taken in)."""
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return

    def pids(self) -> dict[int, int]:
        """replica index -> its latest pid, from the lines printed so far."""
        return {int(m[1]): int(m[3]) for line in self.seen if (m := REPLICA.match(line))}

    def ports(self) -> dict[int, int]:
        """replica index -> its port, from the lines printed so far."""
        return {int(m[1]): int(m[2]) for line in self.seen if (m := REPLICA.match(line))}

    def redis(self) -> tuple[int, int] | None:
        """(port, pid) of the class server's latest redis-server, from the lines printed so far."""
        found = [(int(m[1]), int(m[2])) for line in self.seen if (m := REDIS.match(line))]
        return found[-1] if found else None

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM, as Ctrl-C would: the class server ends every process it started."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_all_ended(pids: list[int], timeout: float = 15) -> list[int]:
    """The pids still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [p for p in pids if alive(p)]
