"""The class server's HAProxy configuration: what a lecture needs is in it, and haproxy itself accepts it."""

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy"))
from haproxy_config import Backend, haproxy_config

BACKENDS = [Backend("p0", "127.0.0.1", 41234), Backend("p1", "127.0.0.1", 41235), Backend("m2", "10.0.0.12", 8502)]


def test_the_config_holds_affinity_lecture_timeouts_and_health_checks(tmp_path):
    text = haproxy_config("127.0.0.1", 8501, BACKENDS, str(tmp_path / "admin.sock"))
    for line in ("bind 127.0.0.1:8501", "cookie ATTNVIZ_PROCESS insert indirect nocache", "timeout tunnel 3h",
                 "option httpchk", "http-check send meth GET uri /_stcore/health", "balance leastconn",
                 "server p0 127.0.0.1:41234 cookie p0 check inter 1s fall 2",
                 "server m2 10.0.0.12:8502 cookie m2 check inter 1s fall 2", "timeout check 5s"):
        assert line in text, line
    assert "balance source" not in text  # one campus NAT would put the whole class on one process


def test_haproxy_accepts_it(tmp_path):
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert Path(haproxy).exists(), "haproxy is needed: run tests/install_browser.sh"
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config("127.0.0.1", 8501, BACKENDS, str(tmp_path / "admin.sock")))
    check = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "[WARNING]" not in check.stdout + check.stderr, check.stdout + check.stderr
