"""The room watcher (ui/lecture/wake.py) in real Chromium, on one `streamlit run app.py` whose lecture store is a
real redis-server: a follower's page moves to the next step on Next, draws the figures on Reveal and confirms an
answer, and its browser never asks for a poll's run itself (a timer's request could land just after a full run's
script and make Streamlit drop that run's last messages: an answer kept whose confirmation never arrived)."""

import re
import signal
from pathlib import Path

import pytest
from browser_helpers import chromium_page, exceptions_on, streamlit_server, wait_for_app_idle, wait_for_text
from redis_helpers import redis_server
from streamlit.proto.BackMsg_pb2 import BackMsg

from attnviz.lecture.store.redis_store import RedisStore

PLAN = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
PLAN_ID = "uwake"
WITHIN_MS = 30_000  # the watcher looks every 0.25 s: this bounds a loaded machine's run, not the watcher
pytestmark = pytest.mark.browser


class Sent:
    """The rerun requests the page's browser sends over Streamlit's websocket, in order: True for a fragment's own
    timer (the poll), False for a full run."""

    def __init__(self, page):
        self.runs: list[bool] = []
        page.on("websocket", lambda ws: ws.on("framesent", self.frame))

    def frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        msg = BackMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            self.runs.append(bool(msg.rerun_script.fragment_id))

    def timers(self) -> int:
        return sum(self.runs)


@pytest.fixture(scope="module")
def app_on_redis(tmp_path_factory):
    """A real redis-server and the app on it, for the module's tests (a Streamlit server's start and first page cost
    about 5 s of CPU) -> (base URL, redis). A test that stops redis starts it again before it ends."""
    with redis_server(tmp_path_factory.mktemp("redis")) as redis, pytest.MonkeyPatch.context() as env:
        env.setenv("ATTNVIZ_STORE_URL", redis.url)
        with streamlit_server() as server:
            yield server, redis


@pytest.fixture
def room(app_on_redis):
    """The participatory plan and a room of the test's own in the app's store -> (base URL, store, code, key, redis)."""
    server, redis = app_on_redis
    store = RedisStore(redis.url)
    try:
        store.put_plan(PLAN_ID, PLAN.read_bytes())
        code, key = store.create_room(PLAN_ID)
        yield server, store, code, key, redis
    finally:
        store.close()


def pill(page, token: str):
    return page.locator(".st-key-lecture_answer button").filter(has_text=re.compile(f"^{re.escape(token)}$"))


def test_the_watcher_moves_a_follower_on_next_and_draws_the_figures_on_reveal_with_no_timer(room):
    server, store, code, key, _ = room
    with chromium_page(390, 844) as page:
        sent = Sent(page)
        page.goto(f"{server}/follow?room={code}")
        page.wait_for_function("() => location.pathname.endsWith('/step_by_step')", timeout=60_000, polling=100)
        wait_for_text(page, "Step 1 of 3", "Which key token does 'ran' weigh most?")
        wait_for_app_idle(page)

        pill(page, "dog").click()
        wait_for_text(page, "Your answer is in: 'dog' (token 2)", where=".st-key-lecture_answer")
        assert store.answer_count(code, 1) == 1

        store.go_to(code, key, 2)
        page.wait_for_function("() => location.pathname.endsWith('/masks_lab')", timeout=WITHIN_MS, polling=50)
        wait_for_text(page, "Step 2 of 3", "Which mask lets a token see only the tokens before it?")
        wait_for_app_idle(page)

        store.reveal(code, key, 2)
        page.wait_for_selector(".st-key-lecture_class", timeout=WITHIN_MS)
        wait_for_app_idle(page)
        assert sent.runs and sent.timers() == 0, "the browser asked for a poll's run itself"
        assert not exceptions_on(page)


def test_a_follower_is_told_when_the_store_goes_and_follows_again_when_it_is_back(room):
    """redis-server killed mid-lecture: the watcher's read fails, and it wakes the follower's poll to say so; once
    it runs again (as the class server restarts it: same port, same folder), the message goes and Next moves the
    page again."""
    server, store, code, key, redis = room
    with chromium_page(390, 844) as page:
        page.goto(f"{server}/follow?room={code}")
        page.wait_for_function("() => location.pathname.endsWith('/step_by_step')", timeout=60_000, polling=100)
        wait_for_text(page, "Step 1 of 3")
        wait_for_app_idle(page)

        redis.proc.send_signal(signal.SIGKILL)
        redis.proc.wait(10)
        wait_for_text(page, "The lecture's shared store cannot be reached", timeout_ms=WITHIN_MS)

        redis.start()
        redis.wait_ready(20)
        page.wait_for_function("() => !document.body.innerText.includes('shared store cannot be reached')",
                               timeout=WITHIN_MS, polling=100)
        store.go_to(code, key, 2)
        page.wait_for_function("() => location.pathname.endsWith('/masks_lab')", timeout=WITHIN_MS, polling=50)
        wait_for_text(page, "Step 2 of 3")
        assert not exceptions_on(page)


# A Streamlit without one piece of what the watcher needs to wake a page (ui/streamlit_private): taken away in the
# server's own process before it starts, as an upgrade that renamed it would leave it. Streamlit itself serves the
# browser without it (only its agent API calls it).
WITHOUT_WAKE = "from streamlit.runtime import Runtime\ndel Runtime.get_app_session"


@pytest.fixture(scope="module")
def app_without_wake(app_on_redis):
    """The app on the same redis-server, in a server whose Streamlit lacks Runtime.get_app_session."""
    _, redis = app_on_redis
    with streamlit_server(prelude=WITHOUT_WAKE) as server:
        yield server, redis


def test_on_a_streamlit_without_what_waking_takes_a_follower_polls_on_its_timer_and_still_follows(app_without_wake):
    server, redis = app_without_wake
    store = RedisStore(redis.url)
    try:
        store.put_plan(PLAN_ID, PLAN.read_bytes())
        code, key = store.create_room(PLAN_ID)
        with chromium_page(390, 844) as page:
            sent = Sent(page)
            page.goto(f"{server}/follow?room={code}")
            page.wait_for_function("() => location.pathname.endsWith('/step_by_step')", timeout=60_000, polling=100)
            wait_for_text(page, "Step 1 of 3", "a page that follows a room asks the server every 2 s whether the room moved")

            store.go_to(code, key, 2)
            page.wait_for_function("() => location.pathname.endsWith('/masks_lab')", timeout=WITHIN_MS, polling=50)
            wait_for_text(page, "Step 2 of 3")
            store.reveal(code, key, 2)
            page.wait_for_selector(".st-key-lecture_class", timeout=WITHIN_MS)
            assert sent.timers() > 0, "the page never polled on its timer"
            assert not exceptions_on(page)
    finally:
        store.close()
    log = server.log.read_text()
    assert "lacks Runtime.get_app_session" in log and "docs/streamlit-upgrade.md" in log, log[-2000:]
