"""The pieces of Streamlit's private API that attnviz uses (see the package's doc), and the check that each is there:
what it is, where it lives, what the app takes for granted about it and the feature that needs it; which features this
Streamlit lacks, logged once each, and said on the page that needs them."""

from __future__ import annotations

import importlib
import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass

import streamlit as st

log = logging.getLogger(__name__)
POLL_SECONDS = 2.0  # without `wake`, a following page asks this often (the target for Next is 3 s)
STREAM_ROUTE = "_stcore/stream"  # the websocket the frontend opens, as the reconnect script looks for it

FEATURES = {  # feature -> (what it does, what the app does without it), for the log and the page
    "wake": ("the server waking a page that follows a lecture room",
             f"a page that follows a room asks the server every {POLL_SECONDS:g} s whether the room moved: slower, but "
             "it follows"),
    "reconnect": ("reloading a follower's page when its server process was replaced",
                  "a follower's page whose server process was replaced stays as it was until it is reloaded"),
    "address": ("keeping the address bar in step with the controls after two quick changes",
                "a link copied right after two quick changes may lack the first"),
    "history": ("telling Back and Forward from a new token pick", "Back to an earlier token keeps the token shown"),
    "component": ("registering the heatmap component once", "it is registered again on every use"),
    "network": ("finding this machine's network address", "set public_url in .streamlit/attnviz.toml for the class"),
    "rerun": ("rerunning only the parts a switch changes", "the whole page reruns"),
    "warm": ("drawing a lecture's steps once when its room starts, in a session with no browser",
             "each step's first draw waits for the class to open it (a few seconds more on the first Next)"),
    "refused": ("telling a link's value that a control does not offer",
                "a link's value that a control does not offer is dropped without a word (Streamlit's own way)"),
    "replay": ("drawing a lecture step once for every follower", "each follower's phone opens the step's page and "
               "runs it itself, as before: slower for a large class"),
}


@dataclass(frozen=True)
class Live:
    """Live objects to look the session's own attributes up on (None: none at hand, not checked here)."""

    session: object | None = None  # the AppSession of the running page
    session_state: object | None = None  # its run's SafeSessionState
    shared: object | None = None  # its run's SharedRunState


@dataclass(frozen=True)
class Piece:
    name: str  # as it reads in Streamlit's source
    owner: Callable[[Live], object]  # where it lives: a module, a class, a dataclass, a mapping or a live object
    attribute: str
    features: tuple[str, ...]
    relies_on: str  # what the app takes for granted about it
    value: str | None = None  # a constant's value the app relies on
    live: bool = False  # an attribute of a live object (the running page's session), looked up on every page


def _module(name: str) -> Callable[[Live], object]:
    return lambda live: importlib.import_module(name)


def _in(module: str, *path: str) -> Callable[[Live], object]:
    def owner(live: Live) -> object:
        found = importlib.import_module(module)
        for name in path:
            found = getattr(found, name)
        return found
    return owner


RUNTIME, CTX = "streamlit.runtime", "streamlit.runtime.scriptrunner_utils.script_run_context"
SESSION, STATE = "streamlit.runtime.app_session", "streamlit.runtime.state"
STATE_MODULE, QUERY_MODULE = STATE + ".session_state", STATE + ".query_params"
PIECES = (
    Piece("Runtime.exists", _in(RUNTIME, "Runtime"), "exists", ("wake", "component"), "a server runtime is running"),
    Piece("Runtime.instance", _in(RUNTIME, "Runtime"), "instance", ("wake", "component"), "the process's one runtime"),
    Piece("Runtime.get_app_session", _in(RUNTIME, "Runtime"), "get_app_session", ("wake",),
          "a session by its id, None once its tab has gone (safe from any thread)"),
    Piece("scriptrunner.get_script_run_ctx", _module("streamlit.runtime.scriptrunner"), "get_script_run_ctx",
          ("wake", "address", "history"), "the running script's context, None outside a run"),
    Piece("ScriptRunContext.session_id", _in(CTX, "ScriptRunContext"), "session_id", ("wake",), "the session's id"),
    Piece("ThreadState.get", _in(CTX, "ThreadState"), "get", ("wake",), "the running fragment's state"),
    Piece("FragmentThreadState.fragment_id", _in(CTX, "FragmentThreadState"), "fragment_id", ("wake",),
          "the id of the fragment running now, as a client's rerun request names it"),
    Piece("AppSession.request_rerun", _in(SESSION, "AppSession"), "request_rerun", ("wake", "warm", "replay"),
          "rerun with a ClientState (a fragment's id in it: that fragment; a page's first run: its query_string and "
          "page_name), as the file watcher does"),
    Piece("AppSession._event_loop", lambda live: live.session, "_event_loop", ("wake",),
          "the server's event loop, where a session may be asked to rerun", live=True),
    Piece("AppSession._scriptrunner", lambda live: live.session, "_scriptrunner", ("wake",),
          "None exactly when no run is going and the last run's messages have all been sent", live=True),
    Piece("AppSession._client_state", lambda live: live.session, "_client_state", ("wake",),
          "the ClientState of the browser's last rerun request (its query and widget values)", live=True),
    Piece("ClientState", _module("streamlit.proto.ClientState_pb2"), "ClientState", ("wake", "warm", "replay"),
          "the rerun request (a page's first: query_string, and page_name matched to a page's URL path)"),
    Piece("ClientState.fragment_id", _in("streamlit.proto.ClientState_pb2", "ClientState"), "fragment_id", ("wake",),
          "the fragment to rerun"),
    Piece("ClientState.is_auto_rerun", _in("streamlit.proto.ClientState_pb2", "ClientState"), "is_auto_rerun",
          ("wake",), "a rerun its fragment's timer asked for"),
    Piece("starlette_websocket._ROUTE_WEBSOCKET_STREAM", _module("streamlit.web.server.starlette.starlette_websocket"),
          "_ROUTE_WEBSOCKET_STREAM", ("reconnect",), "the frontend's websocket path, which the reload script watches",
          value=STREAM_ROUTE),
    Piece("ScriptRunContext.shared", _in(CTX, "ScriptRunContext"), "shared", ("address",), "the run's shared state"),
    Piece("SharedRunState.widget_ids_this_run", lambda live: live.shared, "widget_ids_this_run", ("address",),
          "the ids of the widgets drawn in this run (.snapshot())", live=True),
    Piece("ScriptRunContext.session_state", _in(CTX, "ScriptRunContext"), "session_state", ("address",),
          "the SafeSessionState"),
    Piece("SafeSessionState._state", lambda live: live.session_state, "_state", ("address",),
          "the SessionState behind the lock: its widgets' metadata", live=True),
    Piece("SafeSessionState.query_params", _in(STATE + ".safe_session_state", "SafeSessionState"), "query_params",
          ("address",), "a context manager giving the QueryParams under the session's lock"),
    Piece("SessionState._new_widget_state", _in(STATE_MODULE, "SessionState"), "_new_widget_state",
          ("address",), "the widgets' states of this run (WStates)"),
    Piece("WStates.widget_metadata", _in(STATE_MODULE, "WStates"), "widget_metadata", ("address",),
          "widget id -> WidgetMetadata (serializer, deserializer, value_type)"),
    Piece("WidgetMetadata.value_type", _in(STATE + ".common", "WidgetMetadata"), "value_type", ("address",),
          "the widget's value field, as the address writes it"),
    Piece("QueryParams._bindings_by_param", _in(QUERY_MODULE, "QueryParams"), "_bindings_by_param",
          ("address",), "query key -> the widget bound to it (WidgetBinding.widget_id)"),
    Piece("QueryParams.stored_param_matches_corrected_value", _in(QUERY_MODULE, "QueryParams"),
          "stored_param_matches_corrected_value", ("address",), "whether the address holds a widget's value already"),
    Piece("QueryParams.set_corrected_value", _in(QUERY_MODULE, "QueryParams"), "set_corrected_value",
          ("address",), "the call Streamlit itself makes to write a bound widget's value into the address"),
    Piece("SessionState._seed_widget_from_url", _in(STATE_MODULE, "SessionState"), "_seed_widget_from_url",
          ("refused",), "(metadata, key, widget id, the link's value) -> False where the value is dropped (the default "
          "is shown), else True with the value kept in _new_session_state[key]"),
    Piece("query_params.parse_url_param", _module(QUERY_MODULE), "parse_url_param", ("refused",),
          "(the link's value, value_type) -> the value as the widget's serializer writes it; raises on a bad one"),
    Piece("SessionState._new_session_state", _in(STATE_MODULE, "SessionState"), "_new_session_state",
          ("refused",), "key -> a widget's value set in this run"),
    Piece("ScriptRunContext.is_history_navigation", _in(CTX, "ScriptRunContext"), "is_history_navigation",
          ("history",), "True in a run the browser's Back or Forward asked for"),
    Piece("Runtime.bidi_component_registry", _in(RUNTIME, "Runtime"), "bidi_component_registry", ("component",),
          "the runtime's registry of components v2 (.get(name): None when not registered)"),
    Piece("net_util.get_internal_ip", _module("streamlit.net_util"), "get_internal_ip", ("network",),
          "the address `streamlit run` prints as its Network URL"),
    Piece("errors.StreamlitAPIException", _module("streamlit.errors"), "StreamlitAPIException", ("rerun",),
          "what st.rerun raises for a part the last run did not draw"),
    Piece("Runtime._get_async_objs", _in(RUNTIME, "Runtime"), "_get_async_objs", ("warm", "replay"),
          "the runtime's asyncio objects: .eventloop, where sessions are made and closed"),
    Piece("Runtime.connect_session", _in(RUNTIME, "Runtime"), "connect_session", ("warm", "replay"),
          "a new session for a SessionClient (write_forward_msg, client_context), on the event loop"),
    Piece("Runtime.close_session", _in(RUNTIME, "Runtime"), "close_session", ("warm", "replay"),
          "a session shut down for good, on the event loop"),
    Piece("AppSession.session_state", _in(SESSION, "AppSession"), "session_state", ("replay",),
          "the session's SessionState, set before its first run and read after it"),
    Piece("ClientState.page_name", _in("streamlit.proto.ClientState_pb2", "ClientState"), "page_name",
          ("warm", "replay"),
          "the page to run, by its URL path"),
    Piece("ForwardMsg.script_finished", _in("streamlit.proto.ForwardMsg_pb2", "ForwardMsg"), "script_finished",
          ("warm", "replay"), "the message that ends a run (FINISHED_EARLY_FOR_RERUN: another run follows)"),
    Piece("ForwardMsg.new_session", _in("streamlit.proto.ForwardMsg_pb2", "ForwardMsg"), "new_session", ("replay",),
          "the message that begins every run"),
    Piece("Delta.add_block", _in("streamlit.proto.Delta_pb2", "Delta"), "add_block", ("replay",),
          "a block at the message's delta_path (a run's messages build the page: drawn_again.tree_of)"),
    Piece("DeltaGenerator._block", _in("streamlit.delta_generator", "DeltaGenerator"), "_block", ("replay",),
          "a Block protocol buffer made into a container at the script's place"),
    Piece("DeltaGenerator._active_dg", _in("streamlit.delta_generator", "DeltaGenerator"), "_active_dg", ("replay",),
          "the container a `with` block or the call writes into"),
    Piece("DeltaGenerator._cursor", _in("streamlit.delta_generator", "DeltaGenerator"), "_cursor", ("replay",),
          "the container's cursor, where its next element goes"),
    Piece("Cursor.delta_path", _in("streamlit.cursor", "Cursor"), "delta_path", ("replay",),
          "the path of the place the cursor is at, as a delta's metadata names it"),
    Piece("Cursor.lock_element", _in("streamlit.cursor", "Cursor"), "lock_element", ("replay",),
          "takes the place for an element and moves the cursor on"),
    Piece("Cursor.open_block", _in("streamlit.cursor", "Cursor"), "open_block", ("replay",),
          "takes the place for a block and moves the cursor on"),
    Piece("AppSession._enqueue_forward_msg", _in(SESSION, "AppSession"), "_enqueue_forward_msg", ("replay",),
          "puts a message in the session's queue for its browser, on the event loop"),
    Piece("AppSession._browser_queue", lambda live: live.session, "_browser_queue", ("replay",),
          "the session's ForwardMsgQueue (.enqueue), on the event loop", live=True),
    Piece("ScriptRunContext.cached_message_hashes", _in(CTX, "ScriptRunContext"), "cached_message_hashes",
          ("replay",), "the hashes of the messages the browser holds (a reference is sent for those)"),
    Piece("FragmentThreadState.active_script_hash", _in(CTX, "FragmentThreadState"), "active_script_hash",
          ("replay",), "the page script's hash, set on each message's metadata"),
    Piece("forward_msg_cache.populate_hash_if_needed", _module("streamlit.runtime.forward_msg_cache"),
          "populate_hash_if_needed", ("replay",), "a message's hash (without its metadata) and whether it is cacheable"),
    Piece("forward_msg_cache.create_reference_msg", _module("streamlit.runtime.forward_msg_cache"),
          "create_reference_msg", ("replay",), "a message that refers to one the browser holds, by its hash"),
)


def has(owner: object, attribute: str) -> bool:
    """Whether `owner` has `attribute`: a dataclass's field, a protocol buffer message's field, or an attribute."""
    if isinstance(owner, type) and is_dataclass(owner):
        return attribute in {f.name for f in fields(owner)} or hasattr(owner, attribute)
    if isinstance(owner, type) and hasattr(owner, "DESCRIPTOR") and hasattr(owner.DESCRIPTOR, "fields"):
        return attribute in {f.name for f in owner.DESCRIPTOR.fields}
    try:  # without calling the owner's own __getattr__ (SafeSessionState answers every name with session state)
        inspect.getattr_static(owner, attribute)
    except AttributeError:
        return False
    return True


def is_there(piece: Piece, live: Live) -> bool | None:
    """True when the piece is there (with the value relied on), False when not, None when nothing live to look on."""
    try:
        owner = piece.owner(live)
    except (ImportError, AttributeError, TypeError):
        return False
    if owner is None:
        return None
    if not has(owner, piece.attribute):
        return False
    return piece.value is None or getattr(owner, piece.attribute, None) == piece.value


def missing_pieces(live: Live = Live()) -> list[Piece]:
    """The pieces this Streamlit lacks (those on a live object only where one is given)."""
    return [piece for piece in PIECES if is_there(piece, live) is False]


_lock = threading.Lock()
_broken: dict[str, list[str]] = {}  # feature -> the names of the missing pieces it needs
_checked = False


def _report(pieces: list[Piece]) -> None:
    """Record and log each missing piece once."""
    with _lock:
        for piece in pieces:
            for feature in piece.features:
                names = _broken.setdefault(feature, [])
                if piece.name in names:
                    continue
                names.append(piece.name)
                what, without = FEATURES[feature]
                log.error("Streamlit %s lacks %s (relied on: %s), which %s needs: %s. See docs/streamlit-upgrade.md.",
                          st.__version__, piece.name, piece.relies_on, what, without)


def live_objects() -> Live:
    """This run's session and session state, where there is a server session (not in AppTest or a bare script)."""
    try:
        ctx = importlib.import_module("streamlit.runtime.scriptrunner").get_script_run_ctx(suppress_warning=True)
        runtime = importlib.import_module(RUNTIME).Runtime
        if ctx is None:
            return Live()
        session = runtime.instance().get_app_session(ctx.session_id) if runtime.exists() else None
        return Live(session, getattr(ctx, "session_state", None), getattr(ctx, "shared", None))
    except (ImportError, AttributeError, TypeError):
        return Live()


def check_at_start(live: Live | None = None) -> None:
    """Look every piece up once per process (on the first page's session too), log the missing ones; and on every
    page, the session's own pieces on its session (cheap: a few attribute look-ups). live: this run's (live_objects)."""
    global _checked
    live = live_objects() if live is None else live
    if not _checked:
        _checked = True
        found = [is_there(piece, live) for piece in PIECES]
        _report([piece for piece, there in zip(PIECES, found, strict=True) if there is False])
        if not _broken:
            log.info("Streamlit %s: the %d private pieces attnviz uses that are looked up here are all there (%d "
                     "more on a server's session).", st.__version__, found.count(True), found.count(None))
    else:
        _report([piece for piece in PIECES if piece.live and is_there(piece, live) is False])


def works(feature: str) -> bool:
    """Whether every piece the feature needs is there (as far as looked: a live piece is looked at on each page)."""
    return feature not in _broken


def broke(feature: str, err: BaseException) -> None:
    """A call behind the door failed on this Streamlit: the feature falls back from now on, and the log says why."""
    with _lock:
        first = feature not in _broken
        _broken.setdefault(feature, []).append(f"{type(err).__name__}: {err}")
    if first:
        log.error("Streamlit %s: %s failed (%s: %s): %s. See docs/streamlit-upgrade.md.", st.__version__,
                  FEATURES[feature][0], type(err).__name__, err, FEATURES[feature][1])


def say_missing(feature: str, where=st) -> bool:
    """On the page that needs the feature: a plain note when this Streamlit lacks it (True), else nothing."""
    if works(feature):
        return False
    what, without = FEATURES[feature]
    where.caption(f"This Streamlit ({st.__version__}) lacks what attnviz uses for {what} "
                  f"({', '.join(_broken[feature])}): {without}.")
    return True
