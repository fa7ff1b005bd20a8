"""Real `streamlit run` servers for the tests and benchmarks: one on a free port for a block of code, or one shared by
a run's test processes; each stopped at the end, its output in test-artifacts/streamlit-<port>.log.

Apart from tests/browser_helpers.py (which imports Playwright) so that the root conftest can stop a run's shared
server in a run with no browser at hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ServerURL(str):
    """The base URL of a running server; .pid is its process id (benchmarks read its CPU time)."""

    pid: int = 0
    log: Path | None = None  # the server's output (start_streamlit)


def start_streamlit(timeout: float = 90, script: str = "app.py", prelude: str = "",
                    checkout: Path = ROOT) -> tuple[subprocess.Popen, ServerURL]:
    """`streamlit run <script>` (default app.py) on a free port, once it answers its health check: (the process, its
    base URL). Its output goes to test-artifacts/streamlit-<port>.log (url.log). prelude: Python run in the server's
    process before Streamlit starts (a Streamlit without one of its pieces: tests/browser/test_browser_follow_wake.py).
    checkout: the folder the app is served from (another checkout of attnviz: benchmarks/axe_rules.py)."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    args = ["run", script, "--server.port", str(port), "--server.headless", "true", "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false"]
    start = ["-m", "streamlit"] if not prelude else [
        "-c", f"{prelude}\nimport sys\nfrom streamlit.web.cli import main\nsys.argv[0] = 'streamlit'\n"
              "main(prog_name='streamlit')"]  # as `python -m streamlit` runs it
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    log_path = ROOT / "test-artifacts" / f"streamlit-{port}.log"
    with open(log_path, "w") as log:  # the server keeps its own copy
        proc = subprocess.Popen([sys.executable, *start, *args], cwd=checkout, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    url = ServerURL(f"http://127.0.0.1:{port}")
    url.pid, url.log = proc.pid, log_path
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            code = proc.poll()  # read before the stop: None while it still runs
            stop_child(proc)
            raise RuntimeError(f"streamlit did not start (exit code {code})")
        time.sleep(0.2)


def stop_child(proc: subprocess.Popen) -> None:
    """A server this process started: SIGTERM, then SIGKILL if it has not ended within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stop_process(pid: int, wait: float = 10) -> None:
    """A server another process started (the shared one, started by a worker): SIGTERM, then SIGKILL if it has not
    ended within `wait` seconds. It is not this process's child, so its end is read from /proc: gone, or a zombie
    waiting for its own parent."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + wait
        while _running(pid) and time.time() < deadline:
            time.sleep(0.1)
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@contextmanager
def streamlit_server(timeout: float = 90, script: str = "app.py", prelude: str = ""):
    """`streamlit run <script>` (default app.py) on a free port; yields its base URL; stops it afterwards."""
    proc, url = start_streamlit(timeout, script, prelude)
    try:
        yield url
    finally:
        stop_child(proc)


SHARED_SERVER = "browser-server.json"  # in the run's base temporary folder: the shared server's address and pid


def shared_streamlit_server(run_dir: Path) -> ServerURL:
    """One `streamlit run app.py` for all the test processes of a run (pytest-xdist's workers, whose temporary folders
    lie in run_dir): the first to ask starts it, under a lock, and the others read its address. It outlives the worker
    that started it; the run's controller stops it at the end (stop_shared_server)."""
    with open(run_dir / "browser-server.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        info = run_dir / SHARED_SERVER
        if info.exists():
            known = json.loads(info.read_text())
            url = ServerURL(known["url"])
            url.pid = known["pid"]
            return url
        _, url = start_streamlit()
        info.write_text(json.dumps({"url": url, "pid": url.pid}))
        return url


def stop_shared_server(run_dir: Path) -> None:
    """The run's shared server stopped, if a worker started one (tests/conftest.py, in the controller at the end)."""
    info = run_dir / SHARED_SERVER
    if info.exists():
        stop_process(json.loads(info.read_text())["pid"])
        info.unlink()
