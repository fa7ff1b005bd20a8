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
import time
import urllib.request
from dataclasses import dataclass, field

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
        import websockets

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
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

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
