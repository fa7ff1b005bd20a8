"""A real redis-server for a test: Debian's binary, on a free loopback port, with a password, append-only with
`appendfsync always` (as the class server runs it), its files in a test's folder, stopped at the end.

tests/install_browser.sh installs redis-server. No fakeredis, no mock.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from browser_helpers import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


@dataclass
class RedisServer:
    port: int
    password: str
    folder: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20) -> None:
        assert Path(REDIS_SERVER).exists(), "redis-server is needed: run tests/install_browser.sh"
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--requirepass", self.password,
             "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
             "--daemonize", "no"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while not self.answers():
            assert self.proc.poll() is None, f"redis-server ended: {(self.folder / 'redis.log').read_text()[-800:]}"
            assert time.monotonic() < deadline, "redis-server did not answer within the time allowed"
            time.sleep(0.05)

    def answers(self) -> bool:
        """Whether redis-server answers PING on its port (with the password)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                reply = b""
                while b"PONG" not in reply and len(reply) < 200:
                    chunk = s.recv(200)
                    if not chunk:
                        break
                    reply += chunk
                return b"PONG" in reply
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@contextlib.contextmanager
def redis_server(folder: Path):
    server = RedisServer(free_port(), secrets.token_hex(16), folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
