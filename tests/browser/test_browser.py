"""The app in a real headless Chromium (Debian's, driven by Playwright) against `streamlit run app.py`.

Screenshots are kept in test-artifacts/ for a person to look at.
"""

import os
from pathlib import Path
from urllib.parse import urlparse

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import app_menu, menu_sections
from browser_helpers import (
    TICK_TEXTS,
    chromium_page,
    exceptions_on,
    header_menu,
    menu_link,
    streamlit_server,
    through_the_menu,
    wait_for_app_idle,
    wait_for_heatmaps,
    wait_for_text,
    wait_until_settled,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# The menu as app.py declares it, in its order: (url path, title); the default page's path is "".
MENU = [(path, title) for _, path, title in app_menu()]  # the lecture pages too: they must open cleanly
PAGES = [path for path, _ in MENU]
TITLES = dict(MENU)
# JS: the titles of the header menu's links marked as the current page, in its open section (none when none is open)
CURRENT = """() => [...document.querySelectorAll('[data-testid="stTopNavDropdownLink"][aria-current="page"]')]
  .map(a => a.innerText.split('\\n').pop().trim())"""

pytestmark = pytest.mark.browser


def type_text(page, text: str) -> None:
    box = page.get_by_label("Text", exact=True)
    box.fill(text)
    box.press("Control+Enter")  # a text area commits its value on Ctrl+Enter (or on blur)


def test_type_a_sentence_see_token_heatmaps_toggle_scaling_see_them_change(server):
    with chromium_page() as page:
        page.goto(server + "/?model=toy")
        wait_for_heatmaps(page)
        type_text(page, "Bright students ask sharp questions")
        page.wait_for_function(
            f"() => ({TICK_TEXTS})().includes('sharp')", timeout=60_000, polling=100)
        wait_for_app_idle(page)
        ticks = page.evaluate(TICK_TEXTS)
        assert {"[CLS]", "bright", "students", "questions", "[SEP]"} <= set(ticks)
        before = wait_for_heatmaps(page)
        page.get_by_text("Scale scores by 1/√d_k").click()
        after = wait_for_heatmaps(page, previous=before)
        assert after != before
        # waited for, not read right after "idle": the note can arrive a moment after the run's status clears
        wait_for_text(page, "Scaling is off")
        assert not exceptions_on(page)
        page.screenshot(path=str(ARTIFACTS / "explorer_toy_unscaled.png"), full_page=True)


def test_html_in_the_text_is_shown_as_plain_text_never_run(server):
    with chromium_page() as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server + "/?model=toy")
        wait_for_heatmaps(page)
        type_text(page, "<script>alert(1)</script> <img src=x onerror=alert(2)> <b>bold</b>")
        page.wait_for_function(f"() => ({TICK_TEXTS})().includes('img')", timeout=60_000, polling=100)
        wait_for_app_idle(page)
        ticks = page.evaluate(TICK_TEXTS)
        assert "<" in ticks and ">" in ticks and "script" in ticks  # drawn as the characters typed
        assert page.locator("img[src='x']").count() == 0
        assert not dialogs and not exceptions_on(page)


def test_a_shared_page_link_on_a_fresh_server_opens_that_page_with_one_menu():
    """A shared link to a page on a fresh server opens that page, under its old URL path, with app.py's menu in the
    header: its sections in order, each listing its pages, and the page opened marked as the current one."""
    with streamlit_server() as url, chromium_page() as page:
        page.goto(url + "/model_view?model=toy")
        page.wait_for_selector("h1", timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert "Model view" in page.locator("h1").first.inner_text()
        menu = header_menu(page)
        assert len(MENU) >= 12 and menu == {section: [TITLES[path] for path in paths]
                                            for section, paths in menu_sections().items()}  # app.py's, nothing else
        assert page.evaluate(CURRENT) == [], "a menu is still open"
        menu_link(page, url, "model_view").wait_for()
        assert page.evaluate(CURRENT) == ["Model view"]
        assert not exceptions_on(page)


LOCAL = {"127.0.0.1", "localhost", "::1"}


# every page's first, cold run on this worker's server: Head claims' scores 300 sentences, minutes on a busy
# 2-core machine (289 s of the 300-second default at load 19, -n 0; past it at load 20 with two workers)
@pytest.mark.timeout(900)
def test_default_model_explorer_and_every_page_open_without_exception_or_a_request_to_another_host(server):
    """Every page of the menu opens without an exception, and no page asks another host for anything: its icons,
    fonts, scripts and pictures come from the app itself. A lecture hall's network may have no internet, and a request
    to an outside host tells a third party who opened the class's page. Chromium (started without its own background
    traffic) records every request the pages make. One visit of each page serves both checks (the requests were a
    walk of their own over five pages, tests/browser/test_browser_no_outside_requests.py).
    The first page is loaded from its address, the others opened by the menu's links, as a person goes through the
    menu (browser_helpers.through_the_menu: about half of Chromium's CPU of a load each; fresh loads have tests of their own)."""
    outside, asked, problems = [], [], []

    def record(request):
        asked.append(request.url)
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in LOCAL:
            outside.append(request.url)

    with chromium_page() as page:
        page.on("request", record)
        window = page.viewport_size
        for path in through_the_menu(page, server, PAGES):
            name = path or "explorer"
            wait_until_settled(page, quiet_ms=1_000)  # the run over, and icons, fonts and charts loaded after it
            problems += [f"{name}: exception {e[:300]}" for e in exceptions_on(page)]
            # Streamlit scrolls inside its own container, so a tall window is what puts a whole page in the picture
            page.set_viewport_size({"width": window["width"], "height": 4200})
            page.screenshot(path=str(ARTIFACTS / f"page_{name}.png"))
            page.set_viewport_size(window)
        icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    if len(asked) <= 20:  # the pages were drawn (scripts, styles, fonts), so the recording saw them
        problems.append(f"requests: only {len(asked)} recorded")
    if not icon or not all(urlparse(h).hostname in LOCAL or h.startswith("data:") for h in icon):
        problems.append(f"requests: the page's icon is not the app's own: {icon}")
    if outside:
        problems.append(f"requests to other hosts: {sorted(set(outside))}")
    assert not problems, "\n".join(problems)
