"""The links of a lecture: a step's page in its state (for the projector and for a follower), the view a student
should open, the follow and presenter-notes links of a room, and the address students can reach.

A step's link is relative ("./step_by_step?…"), so it works under any server address and base path. The
projector's link adds present=1 and the lecture's own keys (which plan, which step, which room); the students'
link leaves those out: a student gets the same view with the sidebar open, to explore on their own, and
without the lecture bar (Previous/Next are the lecturer's). A follower's link is the step's page with the lecture's
keys but no presenter key and no presentation mode. Only the lecturer's links (the projector's, the notes') carry
the room's presenter key.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlencode, urlsplit

from attnviz.lecture.plan import RESERVED, Step

LECTURE_KEYS = RESERVED  # set by the lecture, not by a step's state


def step_query(step: Step, *, lecture: str | None = None, number: int | None = None, room: str | None = None,
               key: str | None = None, present: bool = True) -> list[tuple[str, str]]:
    """The query parameters that open this step: its state, then present=1 and the lecture's keys (key: the room's
    presenter key, for the lecturer's projector only)."""
    pairs = list(step.state)
    if present:
        pairs.append(("present", "1"))
        if step.focus:  # the figure a projector shows first (ui/focus.py); a student's page keeps its order
            pairs.append(("fig", step.focus))
    for name, value in (("lecture", lecture), ("step", number), ("room", room), ("key", key)):
        if value is not None:
            pairs.append((name, str(value)))
    return pairs


def step_link(step: Step, **keys) -> str:
    """The relative link that opens this step ('./' + its URL path + '?' + step_query(step, **keys))."""
    query = urlencode(step_query(step, **keys))
    return f"./{step.page}" + (f"?{query}" if query else "")


def student_link(page_url: str, query: list[tuple[str, str]]) -> str:
    """The link students should open: the page's address as the browser sees it (no query), with the current
    query parameters minus the lecture's own (presentation mode and the lecture bar are the lecturer's)."""
    kept = [(k, v) for k, v in query if k not in LECTURE_KEYS]
    return page_url.split("?", 1)[0] + (f"?{urlencode(kept)}" if kept else "")


def follow_link(base: str, room: str) -> str:
    """The one link a class opens to follow room `room` (base: the address students reach, no trailing slash)."""
    return f"{base}/follow?{urlencode([('room', room)])}"


def notes_link(base: str, room: str, key: str) -> str:
    """The lecturer's presenter-notes link: it carries the presenter key, so it is never shown to the class."""
    return f"{base}/lecture_notes?{urlencode([('room', room), ('key', key)])}"


def is_loopback(url: str) -> bool:
    """Whether a link's host is this machine's own (localhost, 127.*, ::1): no student's phone can open it."""
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.endswith(".localhost") or is_loopback_address(host)


def is_loopback_address(address: str) -> bool:
    """Whether an IP address is this machine's own: 127.*, ::1, and an IPv4 one as an IPv6 socket writes it
    (::ffff:127.0.0.1: a server listening on both sees a browser opened at http://127.0.0.1 so). Not an address:
    False."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def app_base(url: str, page: str = "") -> str:
    """The app's own address (scheme, host, port, base path) from a page's address: without its query and without
    the page's URL path `page` ("" for the default page)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if page and (path == f"/{page}" or path.endswith(f"/{page}")):
        path = path[: -len(page) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}"


def students_base(public_url: str, browser_url: str, network_url: str, page: str = "") -> str:
    """The app's address for the class: the settings' public URL when given; else the address the lecturer's
    browser shows, unless that is loopback and the server has a network address (Streamlit's own, as it prints
    it on start); else that loopback address (the page then warns)."""
    if public_url.strip():
        return public_url.strip().rstrip("/")
    seen = app_base(browser_url, page) if browser_url else ""
    if (not seen or is_loopback(seen)) and network_url:
        return network_url.rstrip("/")
    return seen
