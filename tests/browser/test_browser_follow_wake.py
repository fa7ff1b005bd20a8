"""The room watcher (ui/lecture/wake.py) in real Chromium, on one `streamlit run app.py` whose lecture store is a
real redis-server: a follower's page moves to the next step on Next, and draws the figures on Reveal, with no
request of its own: every run between the lecturer's call and the page's change was asked for by the server. The
page's own timer (follow.POLL_SECONDS, 5 s) ticks just before each call, so without the watcher the page would wait
for the next tick and ask for that run itself."""

from pathlib import Path

import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, exceptions_on, streamlit_server, wait_for_app_idle, wait_for_text
from redis_helpers import redis_server
from streamlit.proto.BackMsg_pb2 import BackMsg

from attnviz.lecture.store.redis_store import RedisStore
from ui.lecture.follow import POLL_SECONDS

PLAN = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
PLAN_ID = "uwake"
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

    def timer_tick(self, page, timeout_s: float = 3 * POLL_SECONDS) -> int:
        """Wait for the poll's own timer to ask for a run; the number of requests sent until then (its next tick
        is POLL_SECONDS away)."""
        seen = self.timers()
        for _ in range(int(timeout_s * 10)):
            page.wait_for_timeout(100)
            if self.timers() > seen:
                return len(self.runs)
        raise AssertionError(f"the poll's timer sent nothing in {timeout_s} s")

    def timers(self) -> int:
        return sum(self.runs)


@pytest.fixture
def room(tmp_path, monkeypatch):
    """A real redis-server, the app on it, the participatory plan and a room -> (base URL, store, code, key)."""
    with redis_server(tmp_path / "redis") as redis:
        monkeypatch.setenv("ATTNVIZ_STORE_URL", redis.url)
        store = RedisStore(redis.url)
        store.put_plan(PLAN_ID, PLAN.read_bytes())
        code, key = store.create_room(PLAN_ID)
        try:
            with streamlit_server() as server:
                yield server, store, code, key
        finally:
            store.close()


def test_the_watcher_moves_a_follower_on_next_and_draws_the_figures_on_reveal(room):
    from playwright.sync_api import sync_playwright

    server, store, code, key = room
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            sent = Sent(page)
            page.goto(f"{server}/follow?room={code}")
            page.wait_for_function("() => location.pathname.endsWith('/step_by_step')", timeout=60_000, polling=100)
            wait_for_text(page, "Step 1 of 3", "Which key token does 'ran' weigh most?")
            wait_for_app_idle(page)

            before = sent.timer_tick(page)
            store.go_to(code, key, 2)
            page.wait_for_function("() => location.pathname.endsWith('/masks_lab')", timeout=POLL_SECONDS * 1000 - 500,
                                   polling=50)
            assert True not in sent.runs[before:], "the page's timer asked for a run between Next and its move"
            wait_for_text(page, "Step 2 of 3", "Which mask lets a token see only the tokens before it?")
            wait_for_app_idle(page)

            before = sent.timer_tick(page)
            store.reveal(code, key, 2)
            page.wait_for_selector(".st-key-lecture_class", timeout=POLL_SECONDS * 1000 - 500)
            assert sent.runs[before:] == [], "the page asked for a run itself between Reveal and the figures"
            assert not exceptions_on(page)
        finally:
            browser.close()
