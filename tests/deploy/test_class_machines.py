"""Several machines, simulated: three network namespaces of the test's own (`ip netns`, as root, as CI runs), each
standing for one machine, joined by a bridge inside the third, with no address outside them:

    machine A (10.77.<n>.1): streamlit run app.py         machine B (10.77.<n>.2): streamlit run app.py
    machine C (10.77.<n>.3): HAProxy in front of A and B, and the one redis-server both use

As docs/class-server.md says for several machines: every process names the one Redis (ATTNVIZ_STORE_URL) and
shares the cookie secret, and HAProxy's backend lists each machine's process. A short link and a room kept in
the Redis are seen by both machines' processes, directly and through the balancer.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))
from haproxy_config import Backend, haproxy_config  # noqa: E402

PORT = 8502  # each machine's Streamlit port (its own namespace: no other process has it)


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


def in_ns(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *args]


class Machines:
    """The three namespaces and their links; removed (with every process started in them) at the end."""

    def __init__(self, tag: str, subnet: int):
        self.names = [f"av{tag}{m}" for m in "abc"]
        self.addresses = [f"10.77.{subnet}.{i}" for i in (1, 2, 3)]
        self.procs: list[subprocess.Popen] = []

    def build(self) -> None:
        a, b, c = self.names
        for ns in self.names:
            sh("ip", "netns", "add", ns)
            sh(*in_ns(ns, "ip", "link", "set", "lo", "up"))
        sh(*in_ns(c, "ip", "link", "add", "br0", "type", "bridge"))
        for ns, address in ((a, self.addresses[0]), (b, self.addresses[1])):
            # a cable from the machine to the bridge on machine C: both ends made inside the namespaces
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", f"to{ns[-1]}", "netns", c)
            sh(*in_ns(ns, "ip", "addr", "add", f"{address}/24", "dev", "eth0"))
            sh(*in_ns(ns, "ip", "link", "set", "eth0", "up"))
            sh(*in_ns(c, "ip", "link", "set", f"to{ns[-1]}", "master", "br0"))
            sh(*in_ns(c, "ip", "link", "set", f"to{ns[-1]}", "up"))
        sh(*in_ns(c, "ip", "addr", "add", f"{self.addresses[2]}/24", "dev", "br0"))
        sh(*in_ns(c, "ip", "link", "set", "br0", "up"))

    def start(self, ns: str, args: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
        out = open(log, "ab")  # noqa: SIM115 - the child holds it
        proc = subprocess.Popen(in_ns(ns, *args), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                env={**os.environ, **(env or {})})
        out.close()
        self.procs.append(proc)
        return proc

    def remove(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for ns in self.names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def can_make_namespaces() -> bool:
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    probe = f"avprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, timeout=30).returncode == 0
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=30)
    return made


@pytest.mark.timeout(420)
def test_two_machines_and_a_balancer_share_one_redis(tmp_path):
    if not can_make_namespaces():
        pytest.skip("network namespaces need root (CI runs as root): `ip netns add` was refused here")
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    redis_server = shutil.which("redis-server") or "/usr/bin/redis-server"
    machines = Machines(f"{os.getpid() % 100000}", 10 + os.getpid() % 200)
    a, b, c = machines.names
    ip_a, ip_b, ip_c = machines.addresses
    password, secret = secrets.token_hex(16), secrets.token_hex(32)
    redis_url = f"redis://:{password}@{ip_c}:6379/0"
    try:
        machines.build()
        (tmp_path / "redis").mkdir()
        config = tmp_path / "redis" / "redis.conf"
        config.write_text(f"bind {ip_c}\nport 6379\nrequirepass {password}\ndir {tmp_path / 'redis'}\n"
                          "appendonly yes\nappendfsync always\nsave \"\"\n", encoding="utf-8")
        machines.start(c, [redis_server, str(config)], tmp_path / "redis.log")
        env = {"ATTNVIZ_STORE_URL": redis_url, "STREAMLIT_SERVER_COOKIE_SECRET": secret,
               "ATTNVIZ_BEHIND_BALANCER": "1", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
               "ATTNVIZ_TORCH_THREADS": "1"}
        for ns, address in ((a, ip_a), (b, ip_b)):
            machines.start(ns, [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(PORT),
                                "--server.address", address, "--server.headless", "true",
                                "--browser.gatherUsageStats", "false"], tmp_path / f"{ns}.log", env)
        haproxy_cfg = tmp_path / "haproxy.cfg"
        haproxy_cfg.write_text(haproxy_config(ip_c, 8501, [Backend("ma", ip_a, PORT), Backend("mb", ip_b, PORT)],
                                              str(tmp_path / "haproxy.sock")))
        machines.start(c, [haproxy, "-f", str(haproxy_cfg), "-db"], tmp_path / "haproxy.log")
        client = subprocess.run(
            in_ns(c, sys.executable, "tests/deploy/machines_client.py", redis_url, f"http://{ip_c}:8501",
                  str(tmp_path / "haproxy.sock"), f"http://{ip_a}:{PORT}", f"http://{ip_b}:{PORT}"),
            cwd=ROOT, capture_output=True, text=True, timeout=360, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert client.returncode == 0, client.stderr[-2000:]
        seen = json.loads(client.stdout.strip().splitlines()[-1])
    finally:
        machines.remove()
    assert all(seen["ready"].values()), seen["ready"]
    for url, page in seen["pages"].items():  # each machine's process opened the short link from the shared Redis
        assert not page["exceptions"], (url, page["exceptions"])
        assert page["query"] == seen["view"], (url, page)
    cookies = {run["cookie"].split("=", 1)[1] for run in seen["through_balancer"]}
    assert all(run["query"] == seen["view"] for run in seen["through_balancer"])
    assert cookies == {"ma", "mb"}, cookies  # the balancer spread the students over both machines
    code, step = seen["room"]
    assert step == 4
    for url, followed in seen["rooms"].items():  # a follower on either machine is shown the room's step
        assert not followed["exceptions"], (url, followed["exceptions"])
        assert followed["steps"] and set(followed["steps"]) == {4}, (url, followed)
        assert parse_qs(followed["query"])["room"] == [code]
    assert not [ns for ns in machines.names if ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                                    text=True, timeout=30).stdout]
