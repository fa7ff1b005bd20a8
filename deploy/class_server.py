"""A class server: N `streamlit run app.py` processes on loopback ports behind HAProxy on one port.

    python deploy/class_server.py                       # one process per core, the class on port 8501
    python deploy/class_server.py --replicas 4 --port 8080
    python deploy/class_server.py --bind 127.0.0.1      # only this machine (tests, a rehearsal)

Why several processes: a Streamlit process runs page scripts on about one core (the GIL), and it is one point
of failure. Here each process is warmed (model loaded, transformers imported, one page drawn) before the
class is told `ready http://<host>:<port>/`; a process that dies is started again on its port, held out of
the balancer until it is warm, and its students reconnect through the balancer to a live one, which draws
their page again from its link. SIGTERM or Ctrl-C ends every process. The processes share one
server.cookieSecret (Streamlit's signed cookies must verify on every process; STREAMLIT_SERVER_COOKIE_SECRET
from the environment when set, so that processes on other machines can share it too, else a random one) and say
they are behind a balancer (ATTNVIZ_BEHIND_BALANCER=1: free-form models stay off unless the settings turn them on).

The lecture store (rooms, the class's answers, uploaded plans, short links) is one Redis that every process
shares: Debian's redis-server, started here on a free loopback port with append-only persistence
(`appendfsync always`: an answer acknowledged to a student is on disk), a password derived from the cookie
secret, its files in the logs folder, and started again on the same port if it dies (it reloads its
append-only file: no room and no acknowledged answer is lost). Each process gets its address in
ATTNVIZ_STORE_URL. When the settings name a Redis of their own ([store] backend = "redis" and url, or
ATTNVIZ_STORE_URL; several machines share one that way), that one is used and none is started.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import hmac
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from haproxy_config import BACKEND, Backend, haproxy_config
from streamlit_client import warm

ROOT = Path(__file__).resolve().parent.parent
INSTALL = "sudo apt-get install -y haproxy redis-server"
STORE_URL_VARIABLE = "ATTNVIZ_STORE_URL"  # attnviz.server_settings reads it: the store every process shares
CLASS_URL_VARIABLE = "ATTNVIZ_CLASS_URL"  # ui/lecture/addresses.py reads it: the address students reach (QR codes)
START_TIMEOUT = 300.0  # seconds a process may take to answer its health check and draw its first page


class Replica:
    """One `streamlit run app.py` process on a loopback port (restarted on the same port when it dies)."""

    def __init__(self, index: int, port: int, env: dict, logs: Path, script: str = "app.py"):
        self.index, self.port, self.env, self.logs, self.script = index, port, env, logs, script
        self.name = f"p{index}"  # its name in HAProxy, and its cookie value
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.logs / f"{self.name}.log", "ab")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", self.script, "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_parent)
        log.close()

    def wait_warm(self, deadline: float) -> None:
        """Wait for the health check, then draw one page (raises when the process dies or takes too long)."""
        while not healthy(self.url):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"process {self.index} did not start (exit code {self.proc.poll()}); see its log "
                                   f"{self.logs / (self.name + '.log')}")
            time.sleep(0.3)
        run = warm(self.url, timeout=max(deadline - time.time(), 10))
        if run.exceptions:
            raise RuntimeError(f"process {self.index}'s first page failed: {run.exceptions[0]}")

    def report(self) -> None:
        print(f"replica {self.index} port {self.port} pid {self.proc.pid}", flush=True)

    def dead(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None


class RedisServer:
    """Debian's redis-server for the lecture store: loopback only, a password, every write on disk before its reply
    (restarted on the same port and folder when it dies: its append-only file brings every key back)."""

    def __init__(self, binary: str, port: int, password: str, folder: Path):
        self.binary, self.port, self.password, self.folder = binary, port, password, folder
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "redis.conf"  # the password in a file only this user reads, never in argv
        config.touch(mode=0o600)
        config.write_text("\n".join([
            "bind 127.0.0.1", f"port {self.port}", f"requirepass {self.password}", f"dir \"{self.folder}\"",
            "appendonly yes", "appendfsync always",  # each write reaches the disk before Redis replies
            'save ""', "daemonize no", "protected-mode yes", ""]), encoding="utf-8")
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen([self.binary, str(config)], stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=die_with_parent)
        log.close()

    def wait_ready(self, timeout: float) -> None:
        deadline = time.time() + timeout
        while not redis_answers(self.port, self.password):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"redis-server did not start (exit code {self.proc.poll()}); see "
                                   f"{self.folder / 'redis.log'}")
            time.sleep(0.1)

    def report(self) -> None:
        print(f"redis port {self.port} pid {self.proc.pid}", flush=True)

    def dead(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def stop(self) -> None:
        end([self.proc])


def redis_answers(port: int, password: str) -> bool:
    """Whether the Redis on this loopback port answers PING with this password (plain RESP: no client needed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(f"AUTH {password}\r\nPING\r\n".encode())
            reply = b""
            while b"PONG" not in reply and len(reply) < 300:
                chunk = s.recv(300)
                if not chunk:
                    break
                reply += chunk
            return b"PONG" in reply
    except OSError:
        return False


def store_password(secret: str) -> str:
    """The Redis password, derived from the cookie secret (one secret to keep for a class, two uses apart)."""
    return hmac.new(secret.encode(), b"attnviz lecture store", hashlib.sha256).hexdigest()


def die_with_parent() -> None:
    """In the child: end with SIGTERM when the class server itself dies, even by SIGKILL (Linux). The kernel sends it
    when the thread that started the child ends, not the process: only the main thread starts children."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def public_host(bind: str) -> str:
    """The host students type: the bound address, or for every interface this machine's outward address."""
    if bind not in ("0.0.0.0", "::", ""):
        return bind
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the outward interface
            return s.getsockname()[0]
        except OSError:
            return socket.gethostname()


def admin(socket_path: str, command: str) -> str:
    """One command on HAProxy's admin socket (e.g. 'disable server attnviz/p0')."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(socket_path)
        s.sendall(command.encode() + b"\n")
        return s.recv(4096).decode(errors="replace")


def replica_env(secret: str, replicas: int, store_url: str) -> dict:
    cores = os.cpu_count() or 1
    return {**os.environ, "PYTHONUNBUFFERED": "1", "ATTNVIZ_BEHIND_BALANCER": "1",
            STORE_URL_VARIABLE: store_url,  # by environment, not argv: it holds the store's password
            # one cookie secret for every process (Streamlit's own advice for replicas); by environment, not argv
            "STREAMLIT_SERVER_COOKIE_SECRET": secret,
            # the processes share the cores: torch threads per process so that together they fill them once
            "ATTNVIZ_TORCH_THREADS": os.environ.get("ATTNVIZ_TORCH_THREADS", str(max(1, cores // replicas)))}


def read_server_settings():
    sys.path.insert(0, str(ROOT))
    # the checkout's attnviz (and torch with it): imported only once the launcher reads the settings, after its path
    from attnviz.engine.models.catalog import OFFERED  # noqa: PLC0415 — after sys.path names the checkout, see above
    from attnviz.server_settings import read_settings, settings_path  # noqa: PLC0415 — as above

    return read_settings(settings_path(ROOT), tuple(OFFERED))


def check_store(url: str) -> None:
    """A Redis the settings name must answer before a class arrives (RuntimeError with why)."""
    from attnviz.lecture.store import StoreError  # noqa: PLC0415 — the checkout's attnviz: after read_server_settings
    from attnviz.lecture.store.redis_store import RedisStore  # noqa: PLC0415 — put the checkout on sys.path (as above)

    try:
        RedisStore(url).ping()
    except StoreError as err:
        raise RuntimeError(f"the settings' lecture store: {err}") from None


def warm_apart(replica: Replica, socket_path: str, restarting: set[int]) -> None:
    """In a thread of its own (a process warms for up to minutes, while Redis and the other processes are still
    watched): wait until the restarted process has drawn a page, then put it back in the balancer. A process that
    fails to warm is said, and started again at the next look (it is dead)."""
    try:
        replica.wait_warm(time.time() + START_TIMEOUT)
    except Exception as err:  # said here: this thread has no caller to tell
        print(f"replica {replica.index} did not start again: {err}", flush=True)
        with contextlib.suppress(OSError):
            replica.proc.kill()
    else:
        with contextlib.suppress(OSError):  # a balancer that does not answer ended: the main loop says so
            admin(socket_path, f"enable server {BACKEND}/{replica.name}")
        print(f"replica {replica.index} is back in the balancer", flush=True)
    finally:
        restarting.discard(replica.index)


def restart_redis(redis: RedisServer) -> None:
    print(f"redis-server died (exit code {redis.proc.returncode}); starting it again", flush=True)
    redis.start()
    redis.report()
    redis.wait_ready(60)


def warm_all(replicas: list[Replica], timeout: float) -> None:
    """Start every process and wait until each has drawn a page (in parallel: each loads on its own)."""
    deadline, failures = time.time() + timeout, []
    for r in replicas:
        r.start()
        r.report()

    def wait(r: Replica) -> None:
        try:
            r.wait_warm(deadline)
        except Exception as err:  # reported together below
            failures.append(str(err))

    threads = [threading.Thread(target=wait, args=(r,), daemon=True) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError("; ".join(failures))


def restart(replica: Replica, socket_path: str) -> None:
    """Start a dead process again on its port, out of the balancer until it has drawn a page (warm_apart). Called in
    the main thread: a child's PR_SET_PDEATHSIG (die_with_parent) fires when the thread that started it ends, so a
    process started from a short-lived thread was sent SIGTERM as soon as that thread had warmed it."""
    print(f"replica {replica.index} died (exit code {replica.proc.returncode}); starting it again", flush=True)
    with contextlib.suppress(OSError):  # a balancer that does not answer ended: the main loop says so
        admin(socket_path, f"disable server {BACKEND}/{replica.name}")
    replica.start()
    replica.report()


def serve(args) -> None:
    haproxy = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if os.path.exists(p)), None)
    if haproxy is None:
        sys.exit(f"haproxy is not installed: the class server needs Debian's haproxy. Install it with:\n    {INSTALL}")
    settings = read_server_settings()
    for problem in settings.problems:
        print(f"settings: {problem}", flush=True)
    own_store = settings.store_backend != "redis"  # else the settings name a Redis that every machine shares
    redis_binary = shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server",) if os.path.exists(p)), None)
    if own_store and redis_binary is None:
        sys.exit("redis-server is not installed: the class server keeps its lecture rooms in Debian's redis-server. "
                 f"Install it with:\n    {INSTALL}")
    work = Path(args.logs) if args.logs else Path(tempfile.mkdtemp(prefix="attnviz-class-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"logs and the haproxy config in {work}" + ("" if args.logs else " (removed at the end)"), flush=True)
    secret = os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET") or secrets.token_hex(32)
    redis = RedisServer(redis_binary, free_port(), store_password(secret), work / "redis") if own_store else None
    env = {**replica_env(secret, args.replicas, redis.url if redis else settings.store_url),
           CLASS_URL_VARIABLE: f"http://{public_host(args.bind)}:{args.port}"}  # the balancer's, not a process's
    replicas = [Replica(i, free_port(), env, work, args.script) for i in range(args.replicas)]
    balancer = None
    stopping = threading.Event()
    restarting: set[int] = set()  # replicas being started again

    def stop(signum, frame):
        stopping.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        if redis is not None:
            redis.start()
            redis.report()
            redis.wait_ready(60)
        else:
            check_store(settings.store_url)
            print("store: the Redis named by the settings", flush=True)
        warm_all(replicas, START_TIMEOUT)
        socket_path = str(work / "haproxy.sock")
        config = work / "haproxy.cfg"
        config.write_text(haproxy_config(args.bind, args.port, [Backend(r.name, "127.0.0.1", r.port) for r in replicas],
                                         socket_path))
        balancer = subprocess.Popen([haproxy, "-f", str(config), "-db"], stdout=open(work / "haproxy.log", "ab"),  # noqa: SIM115
                                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        deadline = time.time() + 15
        probe = "127.0.0.1" if args.bind in ("0.0.0.0", "::", "") else args.bind
        while not healthy(f"http://{probe}:{args.port}"):
            if balancer.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"haproxy did not start (see {work / 'haproxy.log'}; is port {args.port} free?)")
            time.sleep(0.2)
        print(f"haproxy port {args.port} pid {balancer.pid}", flush=True)
        print(f"ready http://{public_host(args.bind)}:{args.port}/", flush=True)
        while not stopping.is_set():
            if balancer.poll() is not None:
                raise RuntimeError(f"haproxy ended (exit code {balancer.returncode}); see {work / 'haproxy.log'}")
            if redis is not None and redis.dead():
                restart_redis(redis)
            for r in replicas:
                if r.dead() and r.index not in restarting:
                    restarting.add(r.index)
                    restart(r, socket_path)  # here, in the main thread (why: restart)
                    threading.Thread(target=warm_apart, args=(r, socket_path, restarting), daemon=True).start()
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except RuntimeError as err:
        print(f"class server: {err}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        end([balancer] + [r.proc for r in replicas])
        end([redis.proc if redis else None])  # last: a process may still write while it ends
        if not args.logs:
            shutil.rmtree(work, ignore_errors=True)
        print("stopped", flush=True)


def end(procs: list) -> None:
    """SIGTERM to every process, then SIGKILL to any still running after 10 s."""
    live = [p for p in procs if p is not None and p.poll() is None]
    for p in live:
        p.terminate()
    deadline = time.time() + 10
    for p in live:
        try:
            p.wait(max(deadline - time.time(), 0.1))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


def main() -> None:
    parser = argparse.ArgumentParser(description="N Streamlit processes of attnviz behind HAProxy, for a class.")
    parser.add_argument("--replicas", type=int, default=os.cpu_count() or 1,
                        help="how many `streamlit run app.py` processes (default: one per core)")
    parser.add_argument("--port", type=int, default=8501, help="the port the class opens (default 8501)")
    parser.add_argument("--bind", default="0.0.0.0",
                        help="the address HAProxy listens on (default: every interface; 127.0.0.1: this machine only)")
    parser.add_argument("--logs", help="a folder for the processes' logs and the haproxy config, kept at the end "
                                       "(default: a temporary folder, removed)")
    parser.add_argument("--script", default="app.py", help="the script each process runs (default app.py; the class "
                                                            "benchmark runs a bare one: Streamlit's own floor)")
    args = parser.parse_args()
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    serve(args)


if __name__ == "__main__":
    main()
