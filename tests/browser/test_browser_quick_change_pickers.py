"""The quick change on every page with token pickers, in a real headless Chromium at 1024×768 ?present=1: a new
sentence typed and the 1/√d_k switch clicked before the browser has heard back about the sentence. The pickers must
end on the same token in the new sentence, and the address must name it (ui/token_link.py).

How the race is made to happen every time: the app's websocket is routed through Playwright, and what the server
sends is held back from the page while the sentence's run finishes on the server; the switch is clicked then, so its
rerun carries what a browser that has not heard back carries (the picker's value and the address of the OLD
sentence: 'it (10)', fh_query=10), as it did by chance in a CI run; then the held messages are let through. Before the
fix every page here ended on the old position's token ('because (10)'). Screenshots: test-artifacts/late_<page>.png."""

import contextlib
import os
import re
import time
from urllib.parse import quote, unquote_plus

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
ANIMAL = "The animal didn't cross the street because it was too tired."
TROPHY = "The trophy didn't fit in the suitcase because it was too big."
# MiniLM's tokens: [CLS] the animal didn ' t cross the street because it was too tired . [SEP]
#                  [CLS] the trophy didn ' t fit in the suitcase because it was too big . [SEP]

PAGES = {  # page -> (the link's settings in ANIMAL, {picker key: the option it must show in TROPHY}, the address's)
    "find_head": ({"fh_query": "10", "fh_key": "9"}, {"fh_query": "it (11)", "fh_key": "because (10)"},
                  {"fh_query": "11", "fh_key": "10"}),
    "step_by_step": ({"sbs_query": "10: it", "sbs_key": "9: because"}, {"sbs_query": "11: it", "sbs_key": "10: because"},
                     {"sbs_query": "11: it", "sbs_key": "10: because"}),
    "encoder_layer": ({"enc_token": "10: it"}, {"enc_token": "11: it"}, {"enc_token": "11: it"}),
    "qk_space": ({"layer": "3", "qk_head": "1", "qk_row": "10"}, {"qk_row": "it (11)"}, {"qk_row": "11"}),
}


class HeldSocket:
    """The app's websocket through Playwright: page → server always passes; server → page is held while `holding`,
    and the server's finished runs are counted (ForwardMsg script_finished)."""

    def __init__(self):
        self.holding, self.held, self.finished, self.page_side = False, [], 0, None

    def route(self, ws) -> None:
        server = ws.connect_to_server()
        self.page_side = ws
        ws.on_message(server.send)
        server.on_message(self._from_server)

    def _from_server(self, message) -> None:
        if isinstance(message, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(message)
            self.finished += msg.WhichOneof("type") == "script_finished"
        if self.holding:
            self.held.append(message)
        else:
            self.page_side.send(message)

    def release(self) -> None:
        self.holding = False
        for message in self.held:
            self.page_side.send(message)
        self.held.clear()


def wait_until(page, done, what: str, seconds: float = 180) -> None:
    """Let Playwright deliver events (the routed socket's) until done() holds."""
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        page.wait_for_timeout(100)


def shown(page, key: str) -> str:
    return page.locator(f".st-key-{key} input[role='combobox']").input_value().strip()


@pytest.mark.parametrize("path", list(PAGES))
def test_a_switch_clicked_before_the_new_sentence_came_back_keeps_each_pickers_token(server, path):
    link, want, in_link = PAGES[path]
    params = "&".join(f"{k}={quote(v)}" for k, v in link.items())
    socket = HeldSocket()
    with chromium_page(width=1024, height=768) as page:
        page.route_web_socket(re.compile(r".*/_stcore/stream"), socket.route)
        page.goto(f"{server}/{path}?text={quote(ANIMAL)}&{params}&present=1")
        page.locator(f".st-key-{next(iter(want))} input[role='combobox']").wait_for(timeout=120_000)
        wait_for_app_idle(page)
        page.wait_for_timeout(500)
        socket.holding, runs = True, socket.finished
        box = page.locator(".st-key-presenter_controls textarea")
        box.fill(TROPHY)
        box.blur()  # the sentence's rerun leaves; its answer is held
        wait_until(page, lambda: socket.finished > runs, "the sentence's run on the server")
        page.locator(".st-key-presenter_controls").get_by_text("Scale scores by 1/√d_k").click()  # the late rerun
        wait_until(page, lambda: socket.finished > runs + 1, "the switch's run on the server")
        socket.release()
        with contextlib.suppress(PlaywrightTimeout):  # the assertion below says what the pickers show instead
            page.wait_for_function(
                "(want) => Object.entries(want).every(([k, v]) => document.querySelector("
                "`.st-key-${k} input[role='combobox']`)?.value.trim() === v)", arg=want, timeout=20_000, polling=100)
        wait_for_app_idle(page)
        assert {key: shown(page, key) for key in want} == want
        address = unquote_plus(page.url)
        for key, value in in_link.items():
            assert f"{key}={value}&" in address + "&", address
        assert not page.get_by_role("switch", name="Scale scores by 1/√d_k").is_checked()
        assert not exceptions_on(page)
        page.screenshot(path=str(ARTIFACTS / f"late_{path}.png"))
