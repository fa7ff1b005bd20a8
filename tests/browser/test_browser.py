"""The app in a real headless Chromium (Debian's, driven by Playwright) against `streamlit run app.py`.

Screenshots are kept in test-artifacts/ for a person to look at.
"""

import os
from pathlib import Path
from urllib.parse import urlparse

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import app_menu, menu_sections
from axe_check import AxeLog
from axe_walks import faults_met_nowhere
from browser_helpers import (
    TICK_TEXTS,
    chromium_page,
    exceptions_on,
    header_menu,
    menu_link,
    resized,
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
DESK, PHONE, TALL = (1366, 768), (390, 844), 4200  # axe's two sizes; a window tall enough for a whole page's picture
# The projector: pages at 1024×768 and 1920×1080 with a padding mask on the bundled model (the explorer's M must show
# its [PAD] columns), which comes along through the menu. find_head and qk_space check their own columns
# (tests/browser/test_browser_find_head_qk_space.py).
PROJECTOR_PAGES = ["", "step_by_step", "compare", "masks_lab", "scaling_lab", "model_view", "why_attention",
                   "attention_layer"]
PROJECTOR_SIZES = [(1024, 768), (1920, 1080)]
PADDING_LINK = "?mask=padding&pad=3"

# JS: is the page wider than the window; which formulas (KaTeX) or texts reach past the element that holds
# them. KaTeX's own box is always 2 px wider than its content (italic overhang), so formulas are measured
# by their drawn rectangle against their Streamlit element container, and their content's width too (KaTeX's
# box is capped at its column while what it holds runs on past it).
OVERFLOW = """() => {
  const doc = document.documentElement;
  const text = e => (e.innerText || '').replace(/\\s+/g, ' ').slice(0, 50);
  const wide = [];
  for (const k of document.querySelectorAll('.katex-display > .katex')) {
    const box = k.closest('[data-testid="stElementContainer"]');
    if (!box || k.offsetParent === null) continue;
    const r = k.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.right > b.right + 1 || r.left < b.left - 1)
      wide.push(`math ${text(k)} (${r.width.toFixed(0)} px in ${b.width.toFixed(0)} px)`);
    // KaTeX's box stops at its column while its content runs on (no wrapping): the content's width counts
    const content = k.parentElement.scrollWidth;
    if (content > b.width + 1) wide.push(`math ${text(k)} (its content ${content} px in ${b.width.toFixed(0)} px)`);
  }
  for (const e of document.querySelectorAll('[data-testid="stMarkdownContainer"]')) {
    if (e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
      wide.push(`text ${text(e)} (${e.scrollWidth} > ${e.clientWidth} px)`);
  }
  return {scroll: doc.scrollWidth, inner: window.innerWidth, wide: wide};
}"""
MAIN_HEIGHT = """() => document.querySelector('[data-testid="stMain"]').scrollHeight"""


def whole_page_picture(page, path: str, width: int, height: int) -> None:
    """The page as it is, from top to bottom: Streamlit scrolls inside its own container, so a tall window is what puts
    a whole page in the picture. The window is left that tall."""
    tall = page.evaluate(MAIN_HEIGHT)
    page.set_viewport_size({"width": width, "height": min(max(height, tall), 12_000)})
    page.wait_for_timeout(500)
    page.screenshot(path=path)


def phone_menu_checked(log: AxeLog, page, where: str) -> None:
    """On a phone the menu is in the sidebar, closed: axe with it opened, as a student opens it, then closed."""
    page.get_by_role("button", name="Expand sidebar").click()
    page.locator('[data-testid="stSidebar"][data-collapsed="false"]').wait_for(timeout=30_000)
    page.wait_for_timeout(500)  # its slide in
    log.check(page, f"{where} at {PHONE[0]}×{PHONE[1]}, the menu opened")
    page.get_by_role("button", name="Collapse sidebar").click()
    page.locator('[data-testid="stSidebar"][data-collapsed="true"]').wait_for(state="attached", timeout=30_000)


def projector_problems(page, name: str, size: tuple[int, int]) -> list[str]:
    """At this projector's size (the page drawn and quiet): its whole picture, then at the window's size, nothing wider
    than the window or than its column."""
    width, height = size
    whole_page_picture(page, str(ARTIFACTS / f"projector_{name}_{width}x{height}.png"), width, height)
    resized(page, width, height)
    found = page.evaluate(OVERFLOW)
    problems = [f"{name} at {width}×{height}: too wide: {w}" for w in found["wide"]]
    if found["scroll"] > found["inner"]:
        problems.append(f"{name} at {width}×{height}: page scrolls sideways ({found['scroll']} > {found['inner']} px)")
    return problems


# every page's first, cold run on this worker's server: Head claims' scores 300 sentences, minutes on a busy
# 2-core machine (289 s of the 300-second default at load 19, -n 0; past it at load 20 with two workers)
@pytest.mark.timeout(900)
def test_every_page_opens_cleanly_asks_no_other_host_passes_axe_and_fits_a_projector(server, axe_run_folder):
    """One walk over every page of the menu, each opened once, every check made on it as it is (the three walks over
    every page that made these checks each loaded each page: 2.3 times the CPU):
    - it opens without an exception, and no page asks another host for anything: its icons, fonts, scripts and
      pictures come from the app itself. A lecture hall's network may have no internet, and a request to an outside
      host tells a third party who opened the class's page. Chromium (started without its own background traffic)
      records every request the pages make;
    - axe (WCAG 2.1 A and AA, tests/axe_check.py) at 1366×768 and at 390×844, and with the phone's menu opened: a
      violation fails unless docs/accessibility_faults.toml lists it (tests/browser/test_browser_lecture_walk.py
      walks the lecture plans' steps);
    - then the projector's pages again, with a padding mask from the link, which must come along through the menu: at
      1024×768 and 1920×1080 no horizontal overflow anywhere and no LaTeX block wider than its column.
    Each page's whole picture is kept: test-artifacts/page_<page>.png, projector_<page>_<w>x<h>.png.
    The first page is loaded from its address, the others opened by the menu's links, as a person goes through the
    menu (browser_helpers.through_the_menu: about half of Chromium's CPU of a load each; fresh loads have tests of their
    own); a page is resized, not loaded again, for its other sizes."""
    outside, asked, problems, log = [], [], [], AxeLog()

    def record(request):
        asked.append(request.url)
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in LOCAL:
            outside.append(request.url)

    with chromium_page(*DESK) as page:
        page.on("request", record)
        for path in through_the_menu(page, server, PAGES):
            name = path or "explorer"
            wait_until_settled(page, quiet_ms=1_000)  # the run over, and icons, fonts and charts loaded after it
            problems += [f"{name}: exception {e[:300]}" for e in exceptions_on(page)]
            log.check(page, f"/{path} at {DESK[0]}×{DESK[1]}")
            page.set_viewport_size({"width": DESK[0], "height": TALL})
            page.screenshot(path=str(ARTIFACTS / f"page_{name}.png"))
            resized(page, *PHONE)
            log.check(page, f"/{path} at {PHONE[0]}×{PHONE[1]}")
            if path == PAGES[0]:
                phone_menu_checked(log, page, f"/{path}")
            resized(page, *DESK)  # the next page from the header's menu, at a desk's width
            if path == PAGES[0]:  # the sidebar closed on the phone stays closed (Streamlit keeps it): open it again
                page.get_by_role("button", name="Expand sidebar").click()
                page.locator('[data-testid="stSidebar"][data-collapsed="false"]').wait_for(timeout=30_000)
        icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")

        resized(page, *PROJECTOR_SIZES[0])
        sizes = PROJECTOR_SIZES
        for path in through_the_menu(page, server, PROJECTOR_PAGES, PADDING_LINK):
            name = path or "explorer"
            wait_until_settled(page, quiet_ms=1_500)  # KaTeX and charts too
            if "mask=padding" not in page.url:
                problems.append(f"{name}: the link's padding mask did not come along ({page.url})")
            for k, size in enumerate(sizes):
                if k:  # the page at its second size: laid out and drawn again
                    resized(page, *size)
                    wait_until_settled(page, quiet_ms=1_500)
                problems += projector_problems(page, name, size)
            problems += [f"{name} on the projector: exception {e[:100]}" for e in exceptions_on(page)]
            sizes = sizes[::-1]  # the next page opens at this size (the menu wants a desk's width: both are)
    if len(asked) <= 20:  # the pages were drawn (scripts, styles, fonts), so the recording saw them
        problems.append(f"requests: only {len(asked)} recorded")
    if not icon or not all(urlparse(h).hostname in LOCAL or h.startswith("data:") for h in icon):
        problems.append(f"requests: the page's icon is not the app's own: {icon}")
    if outside:
        problems.append(f"requests to other hosts: {sorted(set(outside))}")
    assert not problems and not log.problems, "\n".join(problems + ([log.report()] if log.problems else []))
    gone = faults_met_nowhere(axe_run_folder, "pages", log.seen)
    assert not gone, "listed, but met nowhere: " + "; ".join(gone)
