"""A browser's part of Streamlit's protocol, without a browser: open a page over the app's websocket and wait
until it is drawn.

The class server warms each process with it (one page run loads the model and transformers), and the tests
and benchmarks play students with it. A session speaks as the browser's frontend does: first an HTTP GET of
the page (a balancer answers with its affinity cookie, which the websocket then carries), then a websocket to
/_stcore/stream, then BackMsg rerun_script with the link's query string and the widget values it changed,
then ForwardMsg deltas until script_finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

RERUN_TIMEOUT = 120.0  # seconds a run may take before the session gives up on it


@dataclass
class DrawnRun:
    """What one run of the page sent: how long it took, and the alerts and exceptions it drew."""

    seconds: float
    alerts: list[str] = field(default_factory=list)  # st.error/warning/info/success bodies
    exceptions: list[str] = field(default_factory=list)
    elements: int = 0
    query: str | None = None  # the query string the page set (page_info_changed), None when it set none


class PageSession:
    """One browser tab on one page: `await s.open()`, then `await s.rerun()` after each change (s.set(...))."""

    def __init__(self, base_url: str, query: str = "", page_script_hash: str = ""):
        self.base_url = base_url.rstrip("/")
        self.query, self.page_script_hash = query, page_script_hash
        self.cookie = ""  # the balancer's affinity cookie (NAME=value), kept across reconnections as a browser does
        self.ws = None
        self.widget_ids: dict[str, str] = {}  # widget key -> its id, from the deltas
        self.states: dict[str, tuple[str, object]] = {}  # widget id -> (value field, value) this session set

    async def open(self) -> None:
        """Load the page over HTTP (for the cookie) and open its websocket."""
        await asyncio.to_thread(self._get_page)
        headers = {"Cookie": self.cookie} if self.cookie else {}
        ws_url = self.base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=30,
                                           additional_headers=headers, ping_interval=None)

    async def lost(self, within: float) -> bool:
        """Whether the connection closes within this many seconds (what is still sent meanwhile is read and
        dropped), as the frontend notices a process that died."""
        deadline = time.monotonic() + within
        try:
            while (left := deadline - time.monotonic()) > 0:
                await asyncio.wait_for(self.ws.recv(), timeout=left)
        except TimeoutError:
            return False
        except Exception:  # websockets' ConnectionClosed, or a reset underneath it
            return True
        return False

    async def reopen(self, within: float = 60.0) -> None:
        """After a lost connection: open again, as the frontend does, retrying while the balancer finds a live
        process (the cookie names the dead one until the balancer answers with another)."""
        deadline = time.monotonic() + within
        while True:
            try:
                await self.open()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)

    def _get_page(self) -> None:
        request = urllib.request.Request(self.base_url + "/", headers={"Cookie": self.cookie} if self.cookie else {})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            for header in response.headers.get_all("Set-Cookie") or []:
                self.cookie = header.split(";", 1)[0]

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def set(self, key: str, field_name: str, value) -> None:
        """Change a widget (by its key) as a user would; the next rerun sends it."""
        wid = self.widget_ids.get(key)
        if wid is None:
            raise KeyError(f"no widget '{key}' on the page")
        self.states[wid] = (field_name, value)

    async def rerun(self, timeout: float = RERUN_TIMEOUT) -> DrawnRun:
        """Ask for a run with the link's query and the widget values set; return what it drew."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_script_hash
        for wid, (field_name, value) in self.states.items():
            w = msg.rerun_script.widget_states.widgets.add()
            w.id = wid
            setattr(w, field_name, value)
        start = time.perf_counter()
        run = DrawnRun(0.0)
        await self.ws.send(msg.SerializeToString())
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=timeout))
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._read_element(fwd.delta.new_element, run)
            elif kind == "page_info_changed":
                run.query = fwd.page_info_changed.query_string
            elif kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    run.exceptions.append("compile error")
                run.seconds = time.perf_counter() - start
                return run

    def _read_element(self, element, run: DrawnRun) -> None:
        name = element.WhichOneof("type")
        run.elements += 1
        if name == "exception":
            run.exceptions.append(element.exception.message[:200])
        elif name == "alert":
            run.alerts.append(element.alert.body)
        wid = getattr(getattr(element, name, None), "id", "")
        if wid.startswith("$$ID-"):
            self.widget_ids[wid.rsplit("-", 1)[-1]] = wid


def warm(base_url: str, query: str = "", timeout: float = 300) -> DrawnRun:
    """Open the default page once and wait until it is drawn: its run loads the model, imports transformers and
    runs the truth check, so the first student finds them ready."""

    async def once() -> DrawnRun:
        session = PageSession(base_url, query)
        await session.open()
        try:
            return await session.rerun(timeout)
        finally:
            await session.close()

    return asyncio.run(once())


NAVIGATION = re.compile(r"location\.assign\(new URL\((\"(?:[^\"\\]|\\.)*\")")  # ui/lecture/follow.navigate's script
BAR = re.compile(r"<b>Step (\d+) of \d+</b>")  # a lecture step's bar (ui/lecture/bar.py): the step a run drew
COOKIE = re.compile(r"document\.cookie = [\"'](\w+)=([A-Za-z0-9_-]+);")  # a page's script that sets a cookie


class Tab:
    """A browser tab as far as Streamlit's protocol goes, for a class that follows a lecture: it loads a page by its
    link (an HTTP GET for the cookies, the websocket, a run), reads everything the server sends as the frontend
    would, reruns each st.fragment(run_every=…) on its timer, follows a page's script that opens another link or
    sets a cookie (what a browser would run), and reloads its link when its connection is lost, as the frontend
    reconnects. Everything it saw is kept for the caller to read (no waiting here)."""

    def __init__(self, base_url: str):
        self.base_url = base_url.rstrip("/")
        self.cookies: dict[str, str] = {}
        self.path, self.query, self.page_hash = "", "", ""
        self.ws = None
        self.tasks: list[asyncio.Task] = []
        self.widget_ids: dict[str, str] = {}  # widget key -> id
        self.widget_fragments: dict[str, str] = {}  # widget key -> the fragment it is drawn in ("" none)
        self.changed_in = ""  # the fragment of the widget set last, for the next send()
        self.options: dict[str, list[str]] = {}  # pills' key -> the options' texts
        self.states: dict[str, tuple[str, object]] = {}
        self.timers: dict[str, asyncio.Task] = {}  # fragment id -> the timer that reruns it
        self.alerts: list[str] = []  # since the page loaded
        self.texts: list[tuple[float, str]] = []  # (monotonic time, markdown body) since the page loaded
        self.exceptions: list[str] = []  # every exception any page drew
        self.drawn_at: float | None = None  # the end of the loaded page's first run
        self.load_started = 0.0
        self.lost_at: float | None = None  # the connection was lost (not closed by a navigation)
        self.back_after: list[float] = []  # seconds from each loss to the page drawn again
        self.runs = 0
        self.closing = False
        self.failed_loads: list[str] = []  # page loads that failed and were tried again (see _open)
        # a lecture's steps as this tab drew them, whatever the page (a step's own, or /follow's follower view): the
        # step of each run that drew a lecture bar and when that run ended, and the alerts drawn after the bar
        self.bar_runs: list[tuple[int, float]] = []
        self.step_alerts: dict[int, list[str]] = {}
        self.run_step: int | None = None  # the step of the bar this run drew (None: no bar yet in this run)
        self.bar_step: int | None = None  # the step of the last bar drawn (a fragment's run draws none)

    async def load(self, link: str) -> None:
        """Open `link` (absolute path or relative to this page) in this tab, as a click or location.assign would."""
        await self._drop()
        parts = urlsplit(urljoin(f"{self.base_url}/{self.path}", link))
        self.path, self.query, self.page_hash = parts.path.strip("/"), parts.query, ""
        self.widget_ids, self.options, self.states, self.alerts, self.texts, self.timers = {}, {}, {}, [], [], {}
        self.widget_fragments, self.changed_in = {}, ""
        self.drawn_at, self.load_started = None, time.monotonic()
        self.run_step = self.bar_step = None
        await asyncio.to_thread(self._get)
        ws_url = self.base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=30,
                                           additional_headers={"Cookie": self._cookie_header()}, ping_interval=None)
        self.closing = False
        self.tasks = [asyncio.create_task(self._read())]
        await self.send()

    def _cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _get(self) -> None:
        request = urllib.request.Request(f"{self.base_url}/{self.path}", headers={"Cookie": self._cookie_header()})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            for header in response.headers.get_all("Set-Cookie") or []:
                name, _, value = header.split(";", 1)[0].partition("=")
                self.cookies[name.strip()] = value.strip()

    async def _drop(self) -> None:
        self.closing = True
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()
        self.tasks = []
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
            self.ws = None

    async def close(self) -> None:
        await self._drop()

    def step_drawn(self, step: int, after: float = 0.0) -> float | None:
        """When this tab first finished a run that drew step `step`'s lecture bar after `after` (monotonic), or None."""
        return next((t for k, t in self.bar_runs if k == step and t > after), None)

    def set(self, key: str, field_name: str, value) -> None:
        """Change a widget (by its key) as a user would; send() then runs the page with it (only the fragment the
        widget is drawn in, as the frontend asks, when it is in one)."""
        self.states[self.widget_ids[key]] = (field_name, value)
        self.changed_in = self.widget_fragments.get(key, "")

    async def send(self, fragment_id: str | None = None, timer: bool = False) -> None:
        """Ask for a run of the page (or of one fragment: the one given, else the one of the widget just set) with
        the link's query and the widget values set; timer: a fragment's own timer asks."""
        if fragment_id is None:
            fragment_id, self.changed_in = self.changed_in, ""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.page_name = self.path
        msg.rerun_script.fragment_id = fragment_id
        msg.rerun_script.is_auto_rerun = timer
        for wid, (field_name, value) in self.states.items():
            w = msg.rerun_script.widget_states.widgets.add()
            w.id = wid
            if field_name == "string_array_value":
                w.string_array_value.data.extend(value)
            else:
                setattr(w, field_name, value)
        await self.ws.send(msg.SerializeToString())
        # a button's press (a trigger) is one run's, as the frontend sends it: not sent again with the next run
        self.states = {wid: state for wid, state in self.states.items() if state[0] != "trigger_value"}

    async def _read(self) -> None:
        ws = self.ws
        try:
            async for raw in ws:
                fwd = ForwardMsg()
                fwd.ParseFromString(raw)
                kind = fwd.WhichOneof("type")
                if kind == "new_session" and not self.page_hash:
                    self.page_hash = fwd.new_session.page_script_hash
                elif kind == "navigation":  # the page this run drew (new_session names the main script's hash)
                    self.page_hash = fwd.navigation.page_script_hash
                elif kind == "page_info_changed":
                    self.query = fwd.page_info_changed.query_string
                elif kind == "auto_rerun" and fwd.auto_rerun.fragment_id not in self.timers:
                    timer = asyncio.create_task(self._every(fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval))
                    self.timers[fwd.auto_rerun.fragment_id] = timer
                    self.tasks.append(timer)
                elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                    self._element(fwd.delta.new_element, fwd.delta.fragment_id)
                elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self.runs += 1
                    if self.run_step is not None:
                        self.bar_runs.append((self.run_step, time.monotonic()))
                        self.run_step = None
                    if self.drawn_at is None:
                        self.drawn_at = time.monotonic()
                        if self.lost_at is not None:
                            self.back_after.append(self.drawn_at - self.lost_at)
                            self.lost_at = None
        except asyncio.CancelledError:
            raise
        except Exception:  # websockets' ConnectionClosed, or a reset underneath it
            pass
        if not self.closing and ws is self.ws:  # lost, not left: the frontend reconnects to the same link
            self.lost_at = self.lost_at or time.monotonic()
            self.tasks.append(asyncio.create_task(self._reconnect()))

    async def _reconnect(self) -> None:
        await self._open(f"/{self.path}?{self.query}")

    async def _open(self, link: str, within: float = 60.0) -> None:
        """load(link), tried again every 0.5 s for up to `within` seconds (a balancer's 503, a process that just
        died): the frontend's reconnection, or a student's reload. Each failed try is counted."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                await self.load(link)
                return
            except Exception as err:
                self.failed_loads.append(f"{type(err).__name__}: {str(err)[:80]}")
                await asyncio.sleep(0.5)

    async def _every(self, fragment_id: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.send(fragment_id, timer=True)
            except Exception:  # the connection is gone: _read reconnects
                return

    def _element(self, element, fragment_id: str = "") -> None:
        name = element.WhichOneof("type")
        if name == "exception":
            self.exceptions.append(element.exception.message[:200])
        elif name == "alert":
            self.alerts.append(element.alert.body)
            self.step_alerts.setdefault(self.bar_step, []).append(element.alert.body)
        elif name == "markdown":
            self.texts.append((time.monotonic(), element.markdown.body))
        elif name == "html":
            if bar := BAR.search(element.html.body):
                self.run_step = self.bar_step = int(bar[1])
            for cookie in COOKIE.finditer(element.html.body):
                self.cookies[cookie[1]] = cookie[2]
            if target := NAVIGATION.search(element.html.body):
                self.tasks.append(asyncio.create_task(self._open(json.loads(target[1]))))
        widget = getattr(element, name, None)
        wid = getattr(widget, "id", "")
        if wid.startswith("$$ID-"):
            key = wid.rsplit("-", 1)[-1]
            self.widget_ids[key] = wid
            self.widget_fragments[key] = fragment_id
            if name == "button_group":
                self.options[key] = [o.content for o in widget.options]
