"""Every use attnviz makes of Streamlit's private API, behind this one door.

Where no public call does the job, the app reaches into Streamlit (pinned in requirements.txt). Each thing it reaches
for is a Piece (pieces.py): where it lives, what the app takes for granted about it, and the feature that needs it.
The rest of the app calls the functions here, never Streamlit's internals; only this package touches them.

At start (app.py, once per server process: check_at_start) every piece is looked up, the session's own attributes on
the session that runs the first page. A missing piece is logged as an error that names it, its feature and what the
app does without it; the page that needs the feature says so (say_missing); and the feature falls back where it can:

    wake       the server wakes a page that follows a lecture room when the room changes (ui/lecture/wake.py).
               Without it the page asks every POLL_SECONDS on the fragment's timer: slower, but it follows.
    reconnect  a follower's page reloads itself when its websocket reconnects (its server process died).
               Without it such a page stays as it was until the student reloads it.
    address    a bound widget's value is written into the address when the browser's copy lacks it (ui/address.py).
               Without it a link copied right after two quick changes may miss the first.
    history    Back and Forward are told from a new pick of a token (ui/token_link.py).
               Without it Back to an earlier token keeps the token shown.
    component  the heatmap component is registered once per runtime (ui/heatmap_widget.py).
               Without it it is registered again on every use (the same component, a little slower).
    network    Streamlit's own guess of this machine's network address, for the class's links (ui/lecture/addresses.py).
               Without it the lecture page asks for the public address to be set.
    rerun      the exception st.rerun raises for a part the last run did not draw (ui/state.py).
               Without it any exception from that call means the whole page reruns.
    warm       a page run once in a session with no browser, when a lecture's room starts (ui/lecture/warm.py).
               Without it each step's first draw waits for the class to open it.
    refused    a link's value that a control does not offer (?layer=999, ?mask=bogus) is said, not only dropped
               (ui/address.py). Without it it is dropped without a word, as Streamlit does.
    replay     a lecture step drawn once in a session with no browser and sent to every follower's page
               (ui/lecture/follower_view.py, drawn_again.py). Without it each follower's phone opens the step's page
               and runs it itself, as before: slower for a large class.

When bumping the pin: docs/streamlit-upgrade.md; tests/app/test_streamlit_private.py fails on a missing piece.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import streamlit as st

from ui.streamlit_private import drawn_again
from ui.streamlit_private.drawn_again import Drawn, Recording
from ui.streamlit_private.pieces import (
    CTX,
    FEATURES,
    PIECES,
    POLL_SECONDS,
    QUERY_MODULE,
    RUNTIME,
    STATE_MODULE,
    STREAM_ROUTE,
    Live,
    Piece,
    broke,
    check_at_start,
    missing_pieces,
    say_missing,
    works,
)

__all__ = [  # the checks (pieces.py), then the calls (below)
    "FEATURES", "PIECES", "POLL_SECONDS", "Live", "Piece", "check_at_start", "missing_pieces", "say_missing", "works",
    "component_registered", "fragment_id", "internal_ip", "is_history_navigation", "on_server_loop",
    "pages_run_without_a_browser", "reload_page_on_reconnect", "rerun_fragment", "rerun_refused",
    "run_page_without_a_browser", "server_running",
    "note_refused_link_values", "refused_link_values", "server_session", "session_id", "session_is_idle",
    "write_bound_values_the_address_lacks",
    "Drawn", "Recording", "can_record", "draw_again", "record_page", "session_counts", "shown_only",
    "with_styles",
]


def _ctx():
    """The running script's ScriptRunContext, or None (outside a run)."""
    return importlib.import_module("streamlit.runtime.scriptrunner").get_script_run_ctx(suppress_warning=True)


def _runtime():
    return importlib.import_module(RUNTIME).Runtime


def session_id() -> str | None:
    """This run's session id, where the server can wake it (None: AppTest, a bare script run, or no `wake`)."""
    if not works("wake"):
        return None
    try:
        ctx, runtime = _ctx(), _runtime()
        if ctx is None or not runtime.exists() or runtime.instance().get_app_session(ctx.session_id) is None:
            return None  # AppTest: a runtime without this session
        return ctx.session_id
    except (ImportError, AttributeError, TypeError) as err:
        broke("wake", err)
        return None


def fragment_id() -> str:
    """The id of the fragment running now ("" outside one, or without `wake`)."""
    if not works("wake"):
        return ""
    try:
        return importlib.import_module(CTX).ThreadState.get().fragment_id or ""
    except (ImportError, AttributeError, RuntimeError) as err:
        broke("wake", err)
        return ""


def server_running() -> bool:
    """Whether this process runs a Streamlit server (from any thread)."""
    try:
        return bool(_runtime().exists())
    except (ImportError, AttributeError) as err:
        broke("wake", err)
        return False


def server_session(session_id: str) -> object | None:
    """A session of this server by its id (from any thread); None once its tab has gone."""
    try:
        return _runtime().instance().get_app_session(session_id)
    except (ImportError, AttributeError, RuntimeError) as err:
        broke("wake", err)
        return None


def on_server_loop(session, fn: Callable, *args) -> None:
    """From any thread: fn(*args) on the server's event loop, where a session may be asked to rerun."""
    try:
        session._event_loop.call_soon_threadsafe(fn, *args)
    except AttributeError as err:
        broke("wake", err)


def session_is_idle(session) -> bool:
    """On the server's loop: no run is going, and the last run's messages have all been sent (a new run of a fragment
    would not drop them)."""
    try:
        return session._scriptrunner is None
    except AttributeError as err:
        broke("wake", err)
        return False


def rerun_fragment(session, fragment: str) -> None:
    """On the server's loop: rerun the session's fragment with its browser's last client state (its query and widget
    values), as the fragment's own timer would ask for it; what Streamlit's file watcher does for a whole script."""
    try:
        state = importlib.import_module("streamlit.proto.ClientState_pb2").ClientState()
        state.CopyFrom(session._client_state)
        state.fragment_id, state.is_auto_rerun = fragment, True
        session.request_rerun(state)
    except (ImportError, AttributeError, TypeError, ValueError) as err:
        broke("wake", err)


# marked as a script alone (ui/accessibility.py): it takes no room (a row's gap under the lecture bar)
RECONNECT_JS = """<span class="attnviz-script" hidden></span><script>
(() => {
  const w = window.parent || window;
  if (w.__attnvizReconnect) return;
  w.__attnvizReconnect = true;
  const Native = w.WebSocket;
  function Watched(url, protocols) {
    const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    if (String(url).includes('/STREAM_ROUTE')) socket.addEventListener('open', () => w.location.reload());
    return socket;
  }
  Watched.prototype = Native.prototype;
  Object.assign(Watched, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  w.WebSocket = Watched;
})();
</script>""".replace("STREAM_ROUTE", STREAM_ROUTE)


def reload_page_on_reconnect() -> None:
    """A page whose server process died: Streamlit's frontend opens a new websocket (through the balancer, to a live
    process) but asks for no run there, so without a timer of its own the page would stay as it was, following
    nothing. Installed once per page load (it wraps the browser's WebSocket in the app's frame: Streamlit's frontend
    is in the same document): when a Streamlit websocket opened after this ran (a reconnection) is open, the page
    loads its link again, as a student's reload would."""
    if works("reconnect"):
        st.html(RECONNECT_JS, unsafe_allow_javascript=True)


def is_history_navigation() -> bool:
    """Whether the browser's Back or Forward asked for this run (False outside a run, or without `history`)."""
    if not works("history"):
        return False
    try:
        ctx = _ctx()
        return ctx is not None and bool(ctx.is_history_navigation)
    except (ImportError, AttributeError) as err:
        broke("history", err)
        return False


def component_registered(name: str) -> bool:
    """Whether this runtime has the component v2 `name` registered (False without `component`: register it again)."""
    if not works("component"):
        return False
    try:
        return _runtime().instance().bidi_component_registry.get(name) is not None
    except (ImportError, AttributeError, RuntimeError) as err:
        broke("component", err)
        return False


def internal_ip() -> str:
    """This machine's address on its network, as `streamlit run` prints it ("" without `network`)."""
    if not works("network"):
        return ""
    try:
        return importlib.import_module("streamlit.net_util").get_internal_ip() or ""
    except (ImportError, AttributeError) as err:
        broke("network", err)
        return ""


def rerun_refused() -> type[BaseException]:
    """The exception st.rerun raises for a part the last run did not draw (without `rerun`: any exception)."""
    if works("rerun"):
        try:
            return importlib.import_module("streamlit.errors").StreamlitAPIException
        except (ImportError, AttributeError) as err:
            broke("rerun", err)
    return Exception


def write_bound_values_the_address_lacks() -> None:
    """Each bound widget drawn in this run whose value (other than its default) the address lacks, or holds another
    value of, is written into it, with the call Streamlit itself makes to restore a bound value (why: ui/address.py).
    Nothing is written in a run where the browser's address had them all."""
    if not works("address"):
        return
    try:
        ctx = _ctx()
        if ctx is None:
            return
        drawn = ctx.shared.widget_ids_this_run.snapshot()
        state = ctx.session_state._state  # the widgets' metadata: no public call reads it
        with ctx.session_state.query_params() as address:
            for key, binding in list(address._bindings_by_param.items()):  # the bindings, by key
                metadata = state._new_widget_state.widget_metadata.get(binding.widget_id)
                if binding.widget_id not in drawn or metadata is None:
                    continue
                value = state[binding.widget_id]
                if value == metadata.deserializer(None):  # at its default: the browser leaves it out of the address
                    continue
                as_written = metadata.serializer(value)
                if not address.stored_param_matches_corrected_value(key, as_written, metadata.value_type):
                    address.set_corrected_value(key, as_written, metadata.value_type)
    except (ImportError, AttributeError, TypeError) as err:
        broke("address", err)


REFUSED = "_attnviz_refused_link_values"  # on the run's ScriptRunContext: [(key, link's value, shown, default?)]


def note_refused_link_values() -> None:
    """Once per process (app.py, before any page): Streamlit's seeding of a bound widget from the link also notes, on
    the run's context, a value it dropped (the control shows its default) or cut down (a clamped number, options
    filtered out): Streamlit only logs these at debug level, and the page would show another view than the link's
    without a word."""
    if not works("refused"):
        return
    try:
        _patch_seeding()
    except (ImportError, AttributeError, TypeError) as err:
        broke("refused", err)


def _patch_seeding() -> None:
    session_state = importlib.import_module(STATE_MODULE).SessionState
    if getattr(session_state, "_attnviz_notes_refusals", False):
        return
    seed, parse = session_state._seed_widget_from_url, importlib.import_module(QUERY_MODULE).parse_url_param

    def seed_and_note(self, metadata, user_key, widget_id, url_value):
        kept = seed(self, metadata, user_key, widget_id, url_value)
        try:
            try:
                asked = parse(url_value, metadata.value_type)
            except (ValueError, TypeError, IndexError):  # not even of the control's kind: dropped
                asked = None
            value = self._new_session_state[user_key] if kept else metadata.deserializer(None)
            shown = metadata.serializer(value)
            # a link that spells the default (?scaled=FALSE) is dropped too, and one that names a picker's option by
            # its value, not by its label ("enc_token=2" for "2: cat"): each shows what it says
            said = [str(v) for v in value] if isinstance(value, (list, tuple)) else str(value)
            if asked not in (shown, said):
                ctx = _ctx()
                if ctx is not None:
                    ctx.__dict__.setdefault(REFUSED, []).append(
                        (user_key, ",".join(url_value) if isinstance(url_value, list) else str(url_value), shown,
                         not kept))
        except Exception as err:  # inside Streamlit's drawing of a control: never break the page
            broke("refused", err)
        return kept

    session_state._seed_widget_from_url = seed_and_note
    session_state._attnviz_notes_refusals = True


def refused_link_values() -> list[tuple[str, str, object, bool]]:
    """The link's values this page load's controls did not take, and forgets them: (key, the link's value, what the
    control shows instead as its serializer writes it, whether that is its default). Empty without `refused`."""
    if not works("refused"):
        return []
    try:
        ctx = _ctx()
        return [] if ctx is None else ctx.__dict__.pop(REFUSED, [])
    except (ImportError, AttributeError, TypeError) as err:
        broke("refused", err)
        return []


def pages_run_without_a_browser() -> bool:
    """Whether this process can run a page in a session that no browser holds (a served app, with `warm`)."""
    return _sessions_without_a_browser("warm")


def run_page_without_a_browser(page: str, query: str, timeout: float) -> bool:
    """From a thread of the app's own (never a page's run): run the app's page at URL path `page` ("" : the default
    page) with this query once, in a session of this server that no browser holds, and close it. A first draw made so
    (imports, models, runs, figures' caches) is one a class no longer waits for. True when its run ended in time."""
    if not works("warm"):
        return False
    try:
        return drawn_again.run_page(page, query, timeout)
    except (ImportError, AttributeError, TypeError, ValueError, RuntimeError) as err:
        broke("warm", err)
        return False


def can_record() -> bool:
    """Whether this process can run a page in a session no browser holds (a served app, with `replay`)."""
    return _sessions_without_a_browser("replay")


def _sessions_without_a_browser(feature: str) -> bool:
    """Whether `feature` (warm or replay, which both make sessions no browser holds) works in this process now."""
    if not works(feature):
        return False
    try:
        return drawn_again.can_record()
    except (ImportError, AttributeError, RuntimeError) as err:
        broke(feature, err)
        return False


def record_page(page: str, query: str, timeout: float, state: dict, keep: tuple[str, ...]) -> Recording | None:
    """What the app's page at URL path `page` draws with `query` in a session no browser holds, `state` set in its
    session state first, and the `keep` keys of its session state after its run (drawn_again.record_page); None
    without `replay`, or when the run did not end well in time."""
    if not works("replay"):
        return None
    try:
        return drawn_again.record_page(page, query, timeout, state, keep)
    except (ImportError, AttributeError, TypeError, ValueError, RuntimeError) as err:
        broke("replay", err)
        return None


def shown_only(part: Drawn) -> Drawn:
    """What was drawn, its widgets disabled and unbound (drawn_again.shown_only)."""
    return drawn_again.shown_only(part)


def with_styles(drawn: tuple[Drawn, ...], styles: tuple[str, ...]) -> tuple[Drawn, ...]:
    """What was drawn, with a recording's style-only HTML in its first HTML element (drawn_again.with_styles)."""
    return drawn_again.with_styles(drawn, styles)


def draw_again(drawn: tuple[Drawn, ...], where, live: dict | None = None) -> None:
    """Draw what a recording drew into this run at `where` (a container), the blocks keyed in `live` filled by
    live[key](container) instead (drawn_again.draw_again)."""
    try:
        drawn_again.draw_again(drawn, where, live)
    except (ImportError, AttributeError, TypeError) as err:
        broke("replay", err)
        raise


def session_counts() -> tuple[int, int]:
    """(sessions with a browser connected, sessions the server keeps) of this process, for a benchmark's figures
    (ui/server_stats.py); (0, 0) without a server or on a Streamlit whose runtime keeps them elsewhere (no feature
    rests on it, so it is not among the pieces checked at start)."""
    try:
        runtime = _runtime()
        if not runtime.exists():
            return 0, 0
        manager = runtime.instance()._session_mgr
        return manager.num_active_sessions(), manager.num_sessions()
    except (ImportError, AttributeError, RuntimeError):
        return 0, 0
