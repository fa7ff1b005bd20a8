"""A page run in a session no browser holds: to warm a process's caches (the `warm` feature: run_page, for
ui/lecture/warm.py), or drawn once and shown to many (the `replay` feature: ui/lecture/follower_view.py).

record_page runs an app page once in a session of this server that no browser holds and keeps what its run drew (the
elements and blocks of the main area, as the frontend would build them from the run's messages); draw_again sends
those elements into the running script of another session, at its place, without running the page's code again.
What was drawn is Streamlit's own wire format (the Element and Block protocol buffers); how a run's messages build
the page, how a session is made without a browser and how an element is put at a script's place are Streamlit's
internals, so they live here, behind the door.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MAIN, EVENT = 0, 2  # the main area's root container and the event container's (1: the sidebar, 3: the bottom)
MEDIA = ("imgs", "audio", "video")  # elements whose files the server keeps per session (gone with the session)
KEY_SEP = "-"  # a keyed element's or container's id ends with -<key> ("$$ID-<hash>-<key>")


@dataclass(frozen=True)
class Drawn:
    """One thing a page drew: an element (a protocol buffer Element) or a block with what it holds, in order."""

    element: object | None = None
    block: object | None = None
    children: tuple[Drawn, ...] = ()
    # (fragment id, page hash, path) -> the messages that draw it there, made for the first session that draws it
    # there and sent as they are to every other (nothing in Streamlit changes a message once it is queued)
    sent: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def key(self) -> str:
        """The user key the page gave it ("" when none)."""
        proto = self.block if self.block is not None else self.element
        if proto is None:
            return ""
        if self.element is not None:
            proto = getattr(proto, proto.WhichOneof("type") or "", None)
        raw = str(getattr(proto, "id", "") or "")
        if not raw.startswith("$$ID-"):
            return ""
        key = raw.split(KEY_SEP, 2)[-1]
        return "" if key == "None" else key

    @property
    def is_control(self) -> bool:
        """An element a user could change (a widget: its id is a widget's), a component's canvas aside."""
        if self.element is None:
            return False
        kind = self.element.WhichOneof("type")
        return kind != "bidi_component" and str(getattr(getattr(self.element, kind), "id", "")).startswith("$$ID-")

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


class _Recorder:
    """A session's client with no browser: it keeps what each run sends (or drops it: keep=False), and notes when a run
    is over."""

    def __init__(self, keep: bool = True):
        self.keep = keep
        forward = importlib.import_module("streamlit.proto.ForwardMsg_pb2").ForwardMsg
        self._early = forward.FINISHED_EARLY_FOR_RERUN
        self._ok = (forward.FINISHED_SUCCESSFULLY, forward.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
        self.finished = threading.Event()
        self.messages: list = []  # this run's so far
        self.run: list | None = None  # the last run that ended well, and all it sent
        self.failed = False

    def write_forward_msg(self, msg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":  # a run begins (a run the page asked for again starts over)
            self.messages = []
        elif kind == "script_finished" and msg.script_finished != self._early:
            self.run, self.failed = self.messages, msg.script_finished not in self._ok
            self.finished.set()
        elif kind == "delta" and self.keep:
            self.messages.append(msg)

    @property
    def client_context(self):
        return None


def tree_of(messages: list, root: int = MAIN) -> tuple[Drawn, ...]:
    """What the run's delta messages leave in one root container, as the frontend builds it: an element or block at a
    path replaces what was there (a placeholder written again), a block starts empty, transient elements (spinners)
    are gone when the run ends."""
    nodes: dict[tuple[int, ...], tuple[str, object]] = {}
    for msg in messages:
        path = tuple(msg.metadata.delta_path)
        if not path or path[0] != root:
            continue
        kind = msg.delta.WhichOneof("type")
        if kind not in ("new_element", "add_block"):
            continue
        for stale in [p for p in nodes if p[:len(path)] == path and len(p) > len(path)]:
            del nodes[stale]  # a block or element written again at a path holds nothing of the old one's
        nodes[path] = (kind, msg.delta.new_element if kind == "new_element" else msg.delta.add_block)

    def build(parent: tuple[int, ...]) -> tuple[Drawn, ...]:
        found = sorted(p for p in nodes if len(p) == len(parent) + 1 and p[:len(parent)] == parent)
        out = []
        for path in found:
            kind, proto = nodes[path]
            if kind == "new_element":
                if proto.WhichOneof("type") != "empty":  # an unused placeholder draws nothing
                    out.append(Drawn(element=proto))
            else:
                out.append(Drawn(block=proto, children=build(path)))
        return tuple(out)

    return build((root,))


def _server_loop():
    """The running server's event loop, or None (no server: AppTest's stand-in runtime has no loop of its own)."""
    runtime = importlib.import_module("streamlit.runtime").Runtime
    if not runtime.exists():
        return None
    loop = runtime.instance()._get_async_objs().eventloop
    return loop if isinstance(loop, asyncio.AbstractEventLoop) and loop.is_running() else None


def can_record() -> bool:
    return _server_loop() is not None


@dataclass(frozen=True)
class Recording:
    """What a page drew in the main area, and the session state it left (the keys asked for). Its session is closed:
    a drawing that holds media files (images) would show none elsewhere."""

    drawn: tuple[Drawn, ...]
    state: Mapping[str, object]
    styles: tuple[str, ...] = ()  # the page's style-only st.html bodies: Streamlit sends those to the event container

    @property
    def holds_media(self) -> bool:
        return any(part.element is not None and part.element.WhichOneof("type") in MEDIA
                   for top in self.drawn for part in top.walk())


def record_page(page: str, query: str, timeout: float, state: Mapping[str, object],
                keep: tuple[str, ...]) -> Recording | None:
    """From any thread but the server's loop (a page's run, or a thread of the app's): run the app's page at URL path
    `page` with `query` once in a new session no browser holds, with `state` in its session state before the run;
    -> what it drew and the session state's `keep` keys after it, or None when it did not end well in time. The
    session is closed either way."""
    recorder = _Recorder()
    kept = _run_once(page, query, timeout, state, keep, recorder)
    if kept is None or recorder.failed or recorder.run is None:
        return None
    styles = tuple(part.element.html.body for part in tree_of(recorder.run, EVENT)
                   if part.element is not None and part.element.WhichOneof("type") == "html")
    return Recording(tree_of(recorder.run, MAIN), kept, styles)


def run_page(page: str, query: str, timeout: float) -> bool:
    """The same run, what it draws dropped (a first draw that warms a process's caches): True when it ended in time."""
    return _run_once(page, query, timeout, {}, (), _Recorder(keep=False)) is not None


def _run_once(page: str, query: str, timeout: float, state: Mapping[str, object], keep: tuple[str, ...],
              recorder: _Recorder) -> dict | None:
    """The page's one run in a new session for `recorder`; the session state's `keep` keys after it (None: no server,
    or the run did not end in time)."""
    loop = _server_loop()
    if loop is None:
        return None
    runtime = importlib.import_module("streamlit.runtime").Runtime.instance()
    request = importlib.import_module("streamlit.proto.ClientState_pb2").ClientState(query_string=query,
                                                                                        page_name=page)

    async def start() -> str:
        made = runtime.connect_session(client=recorder, user_info={})
        session = runtime.get_app_session(made)
        for name, value in state.items():
            session.session_state[name] = value
        session.request_rerun(request)
        return made

    async def left() -> dict:
        session = runtime.get_app_session(made)
        held = session.session_state if session is not None else {}
        return {name: held[name] for name in keep if name in held}

    made = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout)
    try:
        if not recorder.finished.wait(timeout):
            return None
        return asyncio.run_coroutine_threadsafe(left(), loop).result(timeout) if keep else {}
    finally:
        loop.call_soon_threadsafe(runtime.close_session, made)


def with_styles(drawn: tuple[Drawn, ...], styles: tuple[str, ...]) -> tuple[Drawn, ...]:
    """What was drawn, with these style-only bodies put at the start of its first HTML element (a page's CSS applies
    to the whole page wherever it sits; one element more would take a gap of its own in the main area)."""
    if not styles:
        return drawn
    css = "".join(styles)
    done = [False]

    def put(part: Drawn) -> Drawn:
        if done[0]:
            return part
        if part.block is not None:
            return Drawn(block=part.block, children=tuple(put(child) for child in part.children))
        if part.element.WhichOneof("type") != "html":
            return part
        element = type(part.element)()
        element.CopyFrom(part.element)
        element.html.body = css + element.html.body
        done[0] = True
        return Drawn(element=element)

    drawn = tuple(put(part) for part in drawn)
    if not done[0]:  # no HTML element at all (a page that only warned): one of the styles' own, first
        element = importlib.import_module("streamlit.proto.Element_pb2").Element()
        element.html.body = css + "<span hidden></span>"
        drawn = (Drawn(element=element), *drawn)
    return drawn


def shown_only(part: Drawn) -> Drawn:
    """What was drawn, its widgets shown with their values but taking no input (disabled, not bound to the address,
    a chart taking no selection): in another session their changes would reach no code."""
    if part.block is not None:
        return Drawn(block=part.block, children=tuple(shown_only(child) for child in part.children))
    return Drawn(element=_shown_only(part.element))


def _shown_only(element):
    kind = element.WhichOneof("type")
    inner = getattr(element, kind)
    fields = {f.name for f in inner.DESCRIPTOR.fields}
    if not str(getattr(inner, "id", "") or "").startswith("$$ID-"):
        return element
    copy = type(element)()
    copy.CopyFrom(element)
    inner = getattr(copy, kind)
    if "disabled" in fields:
        inner.disabled = True
    if "query_param_key" in fields:
        inner.query_param_key = ""
    if "selection_mode" in fields:  # a chart that takes a click
        del inner.selection_mode[:]
    return copy


def draw_again(drawn: tuple[Drawn, ...], where, live: Mapping[str, Callable[[object], None]] | None = None) -> None:
    """Send what was drawn into this run at `where` (a container of the running script), in order, as if the page had
    drawn it here. A block whose key is in `live` is made as it was, and live[key](its container) fills it instead of
    what was drawn there. No widget is registered: draw widgets with shown_only() first.

    Why not element by element through the script's own channel: each message a script sends is handed from its thread
    to the server's event loop on its own (a wake-up of the loop each), and a revealed step is ~100 messages; here
    they go in batches, one hand-off each, and each message (its copy of the element, its hash for the browser's
    message cache) is made once per drawing and place, not once per follower."""
    runner = importlib.import_module("streamlit.runtime.scriptrunner_utils.script_run_context")
    ctx = runner.get_script_run_ctx(suppress_warning=True)
    if ctx is None or where._active_dg._cursor is None:  # no script run (a bare script): nothing to draw into
        return
    session = importlib.import_module("streamlit.runtime").Runtime.instance().get_app_session(ctx.session_id)
    thread = runner.ThreadState.get()
    batch = _Batch(session, thread.fragment_id or "", thread.active_script_hash, ctx.cached_message_hashes)
    _draw(drawn, where, live or {}, batch)
    batch.send()


def _holds(part: Drawn, keys) -> bool:
    return any(p.block is not None and p.key in keys for p in part.walk())


def _draw(parts: tuple[Drawn, ...], where, live: Mapping[str, Callable[[object], None]], batch: _Batch) -> None:
    dg = where._active_dg
    for part in parts:
        if part.block is not None and _holds(part, live):  # made through the script: live code draws into it
            batch.send()  # what comes before it reaches the browser first
            box = dg._block(part.block)
            fill = live.get(part.key)
            if fill is not None:
                fill(box)
            else:
                _draw(part.children, box, live, batch)
            continue
        cursor = dg._cursor
        path = list(cursor.delta_path)
        if part.block is not None:
            cursor.open_block()  # the script's next element goes after this block
        else:
            cursor.lock_element()
        batch.add(part, path)


class _Batch:
    """Messages for one session, handed to the server's event loop together, in order."""

    def __init__(self, session, fragment_id: str, script_hash: str, cached: frozenset):
        self.session, self.fragment_id, self.script_hash, self.cached = session, fragment_id, script_hash, cached
        self.messages: list = []
        self._forward = importlib.import_module("streamlit.proto.ForwardMsg_pb2").ForwardMsg
        self._cache = importlib.import_module("streamlit.runtime.forward_msg_cache")

    def add(self, part: Drawn, path: list[int]) -> None:
        """The messages that draw `part` (and everything in it) at `path`: one references for those the browser holds."""
        where = (self.fragment_id, self.script_hash, tuple(path))
        made = part.sent.get(where)
        if made is None:
            made = part.sent[where] = self._made(part, path)
        for msg in made:
            if msg.metadata.cacheable and msg.hash in self.cached:  # the browser holds it: a reference will do
                msg = self._cache.create_reference_msg(msg)
            self.messages.append(msg)

    def _made(self, part: Drawn, path: list[int]) -> list:
        msg = self._forward()
        msg.metadata.delta_path[:] = path
        if part.element is not None:
            msg.delta.new_element.CopyFrom(part.element)
        else:
            msg.delta.add_block.CopyFrom(part.block)
        if self.fragment_id:  # as enqueue_message marks a fragment's deltas
            msg.delta.fragment_id = self.fragment_id
        msg.metadata.active_script_hash = self.script_hash  # as ScriptRunContext.enqueue does
        self._cache.populate_hash_if_needed(msg)
        made = [msg]
        for index, child in enumerate(part.children):
            made += self._made(child, [*path, index])
        return made

    def send(self) -> None:
        if self.messages:
            messages, self.messages = self.messages, []
            self.session._event_loop.call_soon_threadsafe(_enqueue_all, self.session, messages)


def _enqueue_all(session, messages: list) -> None:
    """On the server's event loop: the messages into the session's queue for its browser, in order, the server's
    sender woken once (by the last: each enqueue through the session wakes it, a system call each)."""
    for msg in messages[:-1]:
        session._browser_queue.enqueue(msg)
    session._enqueue_forward_msg(messages[-1])
