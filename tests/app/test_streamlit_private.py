"""The one door to Streamlit's internals (ui/streamlit_private): on the pinned Streamlit every piece the app uses is
there; with any one of them taken away, the check finds it, the log names it, its feature falls back, and the page
that needs it says so. The fallback of the lecture's followers (polling on a timer) is checked in Chromium:
tests/browser/test_browser_follow_wake.py."""

import asyncio
import inspect
import logging
import re
from pathlib import Path

import pytest
import streamlit.proto.ClientState_pb2 as client_state_pb2
import streamlit.proto.ForwardMsg_pb2 as forward_msg_pb2
from apptest_helpers import app_menu, assert_healthy, has_heatmap, page_text, run_app
from streamlit import config
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.scriptrunner_utils.shared_run_state import SharedRunState
from streamlit.runtime.state import SafeSessionState, SessionState

from attnviz.lecture import load_plan, step_query
from ui import streamlit_private
from ui.lecture.store import lecture_store
from ui.streamlit_private import PIECES, Live, check_at_start, missing_pieces, works
from ui.streamlit_private import pieces as door

ROOT = Path(__file__).resolve().parents[2]
CLASS_STEPS = ROOT / "tests" / "lecture" / "class_steps.toml"


@pytest.fixture(scope="module")
def live():
    """A real AppSession (as `streamlit run` makes one per tab), SafeSessionState and SharedRunState to look the
    session's own pieces up on."""
    watcher = config.get_option("server.fileWatcherType")
    config.set_option("server.fileWatcherType", "none")  # a session of its own: no watcher on app.py
    loop = asyncio.new_event_loop()

    async def make():
        return AppSession(ScriptData(str(ROOT / "app.py"), False), MemoryUploadedFileManager("/upload"),
                          ScriptCache(), None, {})

    session = loop.run_until_complete(make())
    try:
        yield Live(session, SafeSessionState(SessionState(), lambda: None), SharedRunState())
    finally:
        session.shutdown()
        loop.close()
        config.set_option("server.fileWatcherType", watcher)


@pytest.fixture
def fresh(monkeypatch):
    """The door with nothing checked yet (as a new server process), its record put back after the test."""
    monkeypatch.setattr(door, "_broken", {})
    monkeypatch.setattr(door, "_checked", False)


def take_away(piece, live: Live, monkeypatch) -> None:
    """This Streamlit without the piece, for the test: its attribute removed (a dataclass's field, a class's or a
    module's attribute, a live object's own); a message's field by the message in its module without it (another
    real message of Streamlit's)."""
    owner = piece.owner(live)
    if owner is client_state_pb2.ClientState:
        monkeypatch.setattr(client_state_pb2, "ClientState", client_state_pb2.ContextInfo)
        return
    if owner is forward_msg_pb2.ForwardMsg:
        monkeypatch.setattr(forward_msg_pb2, "ForwardMsg", forward_msg_pb2.ForwardMsgMetadata)
        return
    if isinstance(owner, type) and piece.attribute in getattr(owner, "__dataclass_fields__", {}):
        monkeypatch.delitem(owner.__dataclass_fields__, piece.attribute)
    if piece.attribute in vars(owner):
        if isinstance(owner, type) or inspect.ismodule(owner):
            monkeypatch.delattr(owner, piece.attribute)
        else:  # an instance's own (SafeSessionState's __delattr__ would delete a session-state key)
            monkeypatch.delitem(vars(owner), piece.attribute)
    assert not door.has(owner, piece.attribute)


def test_every_piece_is_there_on_the_pinned_streamlit(live):
    assert [piece.name for piece in missing_pieces(live)] == []
    assert all(door.is_there(piece, live) is True for piece in PIECES)  # each was looked at, none skipped


@pytest.mark.parametrize("piece", PIECES, ids=[piece.name for piece in PIECES])
def test_a_missing_piece_is_found_logged_and_its_feature_falls_back(piece, live, monkeypatch, fresh, caplog):
    take_away(piece, live, monkeypatch)
    missing = [p.name for p in missing_pieces(live)]  # the piece (and the other fields of a message taken away)
    assert piece.name in missing and {name.split(".")[0] for name in missing} == {piece.name.split(".")[0]}, missing
    with caplog.at_level(logging.ERROR, logger=door.__name__):
        check_at_start(live)
    assert all(not works(feature) for feature in piece.features)
    assert all(works(feature) for feature in door.FEATURES if feature not in piece.features)
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(f"lacks {piece.name} " in m for m in logged) and len(logged) >= len(piece.features), logged
    assert all("docs/streamlit-upgrade.md" in m for m in logged)


def test_the_piece_the_reconnect_script_relies_on_is_the_route_it_watches(live, monkeypatch, fresh):
    module = __import__("streamlit.web.server.starlette.starlette_websocket", fromlist=["_"])
    monkeypatch.setattr(module, "_ROUTE_WEBSOCKET_STREAM", "_stcore/socket")  # renamed, not removed
    assert [p.name for p in missing_pieces(live)] == ["starlette_websocket._ROUTE_WEBSOCKET_STREAM"]
    assert "/_stcore/stream'" in streamlit_private.RECONNECT_JS


# ---- the page that needs a missing piece says so, and works without it ------------------------------------------


def drop(monkeypatch, *names: str) -> None:
    for name in names:
        take_away(next(piece for piece in PIECES if piece.name == name), Live(), monkeypatch)


def sidebar_text(at) -> str:
    return "\n".join(str(e.value) for e in at.sidebar.caption)


def test_without_the_pieces_every_page_uses_the_explorer_works_and_its_sidebar_says_what_is_missing(monkeypatch, fresh):
    drop(monkeypatch, "QueryParams.set_corrected_value", "ScriptRunContext.is_history_navigation",
         "Runtime.bidi_component_registry", "errors.StreamlitAPIException")
    at = run_app({"model": "toy", "text": "the cat sat on the mat"})
    assert_healthy(at)
    assert has_heatmap(at, "grid") and has_heatmap(at, "focus_head")  # the component, registered again on every use
    notes = sidebar_text(at)
    for what in ("keeping the address bar in step with the controls", "telling Back and Forward from a new token pick",
                 "registering the heatmap component once", "rerunning only the parts a switch changes"):
        assert f"attnviz uses for {what}" in notes, notes
    at.sidebar.toggle(key="scaled").set_value(False).run()  # the switch's callback: a rerun of the page's parts
    assert_healthy(at)


def test_a_page_with_every_piece_says_nothing_of_them(fresh):
    at = run_app({"model": "toy", "text": "the cat sat on the mat"})
    assert "This Streamlit" not in sidebar_text(at) + page_text(at)


def test_without_what_waking_takes_a_follower_polls_on_a_timer_and_says_so(monkeypatch, fresh):
    """The follower's page in AppTest: its poll is the fragment with a timer, and the page says why; in Chromium
    (tests/browser/test_browser_follow_wake.py) the timer's polls then really move it on Next."""
    drop(monkeypatch, "Runtime.get_app_session")
    store = lecture_store()
    store.put_plan("uprivate", CLASS_STEPS.read_bytes())
    code, _ = store.create_room("uprivate")
    files = {path: file for file, path, _ in app_menu()}
    plan = load_plan(CLASS_STEPS, {path: "" for path in files})
    at = run_app(dict(step_query(plan.step(1), lecture="uprivate", number=1, room=code)), page=files[plan.step(1).page])
    assert_healthy(at)
    text = page_text(at)
    assert re.search(r"lacks what attnviz uses for the server waking a page that follows a lecture room "
                     r"\(Runtime\.get_app_session\): a page that follows a room asks the server every 2 s whether "
                     r"the room moved", text)
    assert not works("wake") and works("reconnect")
