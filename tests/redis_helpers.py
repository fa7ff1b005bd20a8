"""A real redis-server for a test, started as the class server starts its own (deploy/class_server.RedisServer:
Debian's binary on a free loopback port, a password in a 0600 config file, append-only with `appendfsync always`),
its files in a test's folder, stopped at the end.

tests/install_browser.sh installs redis-server. No fakeredis, no mock.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import sys
from pathlib import Path

from browser_helpers import ROOT, free_port

sys.path.insert(0, str(ROOT / "deploy"))
from class_server import RedisServer  # deploy/ is scripts, not a package

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


@contextlib.contextmanager
def redis_server(folder: Path, timeout: float = 20):
    """A started redis-server (RedisServer: .url, .port, .password, .proc), stopped when the block ends."""
    assert Path(REDIS_SERVER).exists(), "redis-server is needed: run tests/install_browser.sh"
    server = RedisServer(REDIS_SERVER, free_port(), secrets.token_hex(16), folder)
    server.start()
    try:
        server.wait_ready(timeout)
        yield server
    finally:
        server.stop()
