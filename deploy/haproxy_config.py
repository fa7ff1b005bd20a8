"""The HAProxy configuration of a class server: one address for the class, N Streamlit processes behind it.

Why each line (facts checked with Debian's haproxy 2.6, see docs/class-server.md):
- cookie affinity (`cookie NAME insert indirect nocache` + `cookie <id>` per server): a Streamlit session lives
  in one process, so a browser must keep reaching it; a cookie does that per browser, where `balance source`
  would put a whole class behind one campus NAT on one process;
- `balance leastconn`: a websocket lasts the whole lecture, so new browsers go to the process holding fewest;
- `timeout tunnel`: after the websocket upgrade it alone governs the connection; 3 hours covers a 2-hour lecture
  and its break, where the short client/server timeouts would cut every socket;
- health checks on Streamlit's /_stcore/health every second, out after 2 failures: a dead process stops getting
  browsers in about 2 s (its port refuses at once); a check waits up to 5 s for its answer (`timeout check`),
  since a process busy with a class answers slowly: with the default (the 1 s interval), 120 students following
  a lecture on 2 busy processes had both taken out, and every page load got 503; and `option redispatch 1`
  sends a reconnecting browser whose cookie names it to a live one at the first failed connection meanwhile;
- an admin socket, so the class server can hold a restarted process out until it is warm.
"""

from __future__ import annotations

from dataclasses import dataclass

BACKEND = "attnviz"
COOKIE = "ATTNVIZ_PROCESS"


@dataclass(frozen=True)
class Backend:
    """One Streamlit process behind the balancer: its name (also its cookie value) and address."""

    name: str
    host: str
    port: int


def haproxy_config(bind: str, port: int, backends: list[Backend], admin_socket: str) -> str:
    """The whole configuration file's text."""
    servers = "\n".join(server_line(b) for b in backends)
    return f"""global
    maxconn 4096
    stats socket {admin_socket} mode 600 level admin

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 15s
    timeout tunnel 3h
    timeout client-fin 10s
    retries 2
    option redispatch 1

frontend class
    bind {bind}:{port}
    default_backend {BACKEND}

backend {BACKEND}
    balance leastconn
    cookie {COOKIE} insert indirect nocache
    option httpchk
    http-check send meth GET uri /_stcore/health
    http-check expect status 200
    timeout check 5s
{servers}
"""


def server_line(backend: Backend) -> str:
    """A backend's `server` line; a process on another machine is the same line with that machine's address."""
    return (f"    server {backend.name} {backend.host}:{backend.port} cookie {backend.name} "
            f"check inter 1s fall 2 rise 2")
