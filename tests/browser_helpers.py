"""A real headless Chromium (Debian's) driven by Playwright, and what the browser tests wait for and read in its pages
(the servers they load them from are tests/streamlit_servers.py's).

Used by the browser tests and by benchmarks/bench_app.py. Chromium is started with the flags
that keep it off the network (this machine has none) and without a sandbox (we run as root).
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from menu_source import menu_section
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright
from streamlit_servers import (  # noqa: F401 - the browser tests import the server's helpers from here too
    ROOT,
    ServerURL,
    cpu_seconds,
    free_port,
    streamlit_server,
)

CHROMIUM = "/usr/bin/chromium"
# --js-flags: V8 without its optimising compilers (TurboFan, Maglev). A test's page lives seconds, too short for
# optimised code to pay for its compiling: Chromium's CPU per visit of the explorer fell from 1.61 s to 1.38 s (three
# alternating runs of 10 warm visits each way, quiet machine, 2026-11-27), with the same wall time per visit.
# Not --disable-threaded-compositing: it cut Chromium's CPU for a warm walk of 8 pages by a quarter (5.8 against 8.0
# CPU-s), but no frame of the page then reaches the browser: every screenshot fails ("Unable to capture
# screenshot"), and the QR test reads its code from one. --single-process closes the browser at a second context (each
# person of the class tests is one). Stopping CSS animations, and polling innerText every 100 ms or not, made no
# difference (2026-11-27).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--js-flags=--no-opt,--no-maglev"]

# JS: a checksum of what every heatmap on the page holds (plotly figures and attnviz's canvas component,
# which files what it drew under window.attnvizHeatmaps[key]), and the token labels that are drawn
DRAWN_SUM = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  let total = 0, cells = 0;
  for (const gd of plots) for (const t of (gd._fullData || [])) {
    if (t.type !== 'heatmap' || !t.z) continue;
    for (const row of t.z) for (const v of row) { total += (v * ((cells % 7) + 1)); cells += 1; }
  }
  const drawn = Object.keys(window.attnvizHeatmaps || {}).sort().map(k => window.attnvizHeatmaps[k].drawn).filter(Boolean);
  if (!cells && !drawn.length) return null;
  return total + ':' + cells + (drawn.length ? '|' + drawn.join('|') : '');
}"""
# JS: how many charts are drawn: plotly figures plus attnviz's canvas heatmaps (one per heatmap() or heatmap_grid() call)
DRAWN_CHARTS = """() => document.querySelectorAll('.js-plotly-plot').length + Object.keys(window.attnvizHeatmaps || {}).length"""
TICK_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot .xtick text, .js-plotly-plot .ytick text')]
  .map(e => e.textContent)
  .concat(...Object.values(window.attnvizHeatmaps || {}).map(h => h.labels ? h.labels() : []))"""


def launch(playwright):
    """Debian's Chromium, headless, with the tests' flags (CHROMIUM_ARGS)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


@contextmanager
def own_chromium():
    """A Chromium of its own (and its Playwright), closed when the block ends."""
    with sync_playwright() as p:
        browser = launch(p)
        try:
            yield browser
        finally:
            browser.close()


class WorkerChromium:
    """One headless Chromium for a test process's browser modules, started at the first chromium_page and closed
    before the process's first test that is not a browser test (tests/conftest.py runs the browser files first). A
    launch (Playwright's driver, then Chromium) costs about a second of CPU; a module of twenty tests made twenty.
    A test that needs several people at once (a lecturer, a projector, students: each their own cookies) opens a
    browser context per person in it (people_browser). Playwright's sync API keeps an asyncio loop in this thread
    while it lives: a browser test that also runs AppTest runs it in another thread (in_own_thread).

    Its tests also share one tab (`tab`), each test's visits loading their addresses into it, as a person's browser
    does. A page in a new tab cost Chromium 2.9-3.1 s of CPU for the explorer, and 1.2-1.5 s loaded into a tab that
    had already shown the app (8 visits each way, quiet machine, 2026-11-26): a new tab is a new renderer process, which
    starts cold. Between tests the tab is emptied: the test's event handlers and routes are removed, the app's
    storage and every cookie (the student's anonymous id) cleared, and it is left on about:blank, which ends the
    test's Streamlit session. A test that needs two pages at once gets a new tab for the second, closed at its end;
    one that needs an init script (which cannot be removed) opens a context of its own."""

    def __init__(self):
        self._playwright = None
        self.browser = None
        self._tab = None
        self._tab_in_use = False
        self._handlers: dict = {}

    def get(self):
        """The Chromium, launched at the first call, and again after one that died: a crash fails the test it happened
        in, not every later test of the worker (a Chromium lost at a run's start under load failed 19, 2026-11-27)."""
        if self.browser is not None and not self.browser.is_connected():
            self.close()
        if self.browser is None:
            self._playwright = sync_playwright().start()
            self.browser = launch(self._playwright)
        return self.browser

    def holds(self, context) -> bool:
        """Is this the shared tab's browser context."""
        return self._tab is not None and not self._tab.is_closed() and self._tab.context == context

    def tab(self, width: int, height: int):
        """The worker's shared tab at this size, or None while a test holds it."""
        if self._tab_in_use:
            return None
        browser = self.get()
        if self._tab is None or self._tab.is_closed():
            self._tab = browser.new_context(viewport={"width": width, "height": height}).new_page()
        else:
            self._tab.set_viewport_size({"width": width, "height": height})
        events = self._tab._impl_obj  # the page's event emitter (pyee): the handlers a test adds are removed after it
        self._handlers = {name: list(events.listeners(name)) for name in events.event_names()}
        self._tab_in_use = True
        return self._tab

    def empty_tab(self) -> None:
        """After a test: the tab as a new one would be, or closed (the next test then opens a new one)."""
        page, self._tab_in_use = self._tab, False
        try:
            events = page._impl_obj
            for name in list(events.event_names()):
                for handler in events.listeners(name):
                    if handler not in self._handlers.get(name, ()):
                        events.remove_listener(name, handler)
            page.unroute_all(behavior="ignoreErrors")
            if page.url.startswith("http"):
                page.evaluate("() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }")
            page.goto("about:blank")
            page.context.clear_cookies()
        except Exception:  # whatever the test left broken or closed: that tab is not reused
            with contextlib.suppress(Exception):
                page.context.close()
            self._tab = None

    def close(self) -> None:
        try:
            if self.browser is not None:
                with contextlib.suppress(Exception):  # one that died
                    self.browser.close()
        finally:
            if self._playwright is not None:
                self._playwright.stop()
            self.browser = self._playwright = self._tab = None


worker_chromium: WorkerChromium | None = None  # set by tests/browser/conftest.py while browser modules share one


def close_shared_chromium() -> None:
    """The shared Chromium closed, if one is open (tests/conftest.py: before a test that is not a browser test)."""
    global worker_chromium
    shared, worker_chromium = worker_chromium, None
    if shared is not None:
        shared.close()


@contextmanager
def people_browser():
    """A Chromium in which a test opens a browser context per person (browser.new_context: own cookies and storage),
    each closed at the test's end: the worker's shared one (a launch and a cold renderer fewer), else one of its own."""
    if worker_chromium is None:
        with own_chromium() as browser:
            yield browser
        return
    browser = worker_chromium.get()
    before = list(browser.contexts)
    try:
        yield browser
    finally:
        for context in browser.contexts:  # the shared tab's stays, though the test may have opened it first
            if context not in before and not worker_chromium.holds(context):
                with contextlib.suppress(Exception):
                    context.close()


def in_own_thread(work, *args):
    """work(*args) in a thread of its own, its result (or its exception): AppTest inside a browser test, whose
    thread holds Playwright's asyncio loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work, *args).result()


@contextmanager
def chromium_page(width: int = 1500, height: int = 1100):
    """A page in headless Debian Chromium: the worker's shared tab when its browser modules share a Chromium (WorkerChromium;
    emptied after the test), a new tab in a context of its own while the shared one is in use, else a Chromium of its
    own."""
    if worker_chromium is not None:
        shared = worker_chromium.tab(width, height)
        if shared is not None:
            try:
                yield shared
            finally:
                worker_chromium.empty_tab()
            return
        context = worker_chromium.get().new_context(viewport={"width": width, "height": height})
        try:
            yield context.new_page()
        finally:
            context.close()
        return

    with own_chromium() as browser:
        yield browser.new_page(viewport={"width": width, "height": height})


def wait_for_heatmaps(page, timeout_ms: float = 90_000, previous: str | None = None) -> str:
    """Wait until heatmaps are drawn (and differ from `previous`, if given); return their checksum."""
    handle = page.wait_for_function(
        f"(prev) => {{ const s = ({DRAWN_SUM})(); return s && s !== prev ? s : null; }}", arg=previous,
        timeout=timeout_ms, polling=50,
    )
    return handle.json_value()


def cell_on_screen(page, key: str, panel: int, row: int, col: int) -> dict:
    """Scroll a cell of the heatmap filed under `key` to the middle of the screen (a mouse can only reach what is
    on screen) and return its centre {"x", "y"} in screen coordinates, where the component says it is."""
    page.evaluate(f"() => window.attnvizHeatmaps['{key}'].reveal({panel}, {row}, {col})")
    page.wait_for_timeout(200)
    return page.evaluate(f"() => window.attnvizHeatmaps['{key}'].cellCenter({panel}, {row}, {col})")


def wait_for_drawn(page, keys: list[str], timeout_ms: float = 120_000, polling: int = 100,
                   idle_timeout_ms: float = 90_000) -> None:
    """Wait until the canvas heatmaps filed under these keys (window.attnvizHeatmaps) are drawn and the run is over."""
    page.wait_for_function("(keys) => keys.every(k => window.attnvizHeatmaps?.[k]?.drawn)", arg=list(keys),
                           timeout=timeout_ms, polling=polling)
    wait_for_app_idle(page, timeout_ms=idle_timeout_ms)


# JS: true once the app has drawn something and neither a run nor a connection has been under way for quiet_ms (a
# first visit connects, runs, loads the model, and a component's first value can start one more run: one idle check
# can come between two of them)
SETTLED = """(quietMs) => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const busy = !main || !main.querySelector('[data-testid="stElementContainer"]')
    || !!document.querySelector('[data-testid="stStatusWidget"]');
  const now = performance.now();
  if (busy || window.__attnvizQuietSince === undefined) { window.__attnvizQuietSince = now; return false; }
  return now - window.__attnvizQuietSince >= quietMs;
}"""


def wait_until_settled(page, quiet_ms: float = 1_500, timeout_ms: float = 180_000) -> None:
    """Wait until the page's runs are over and it has stayed quiet for quiet_ms (charts and KaTeX draw after a run)."""
    page.evaluate("() => { delete window.__attnvizQuietSince; }")
    page.wait_for_function(SETTLED, arg=quiet_ms, timeout=timeout_ms, polling=100)


# Every wait_for_function of the tests names its polling (50 or 100 ms): Playwright's default runs the predicate on
# every animation frame, which keeps a headless renderer making about 60 frames a second while it waits: 0.36-0.54 s
# of Chromium's CPU per 10 s of waiting on the explorer, against 0.03-0.05 s at 100 ms (2026-11-27, quiet machine).
# JS: no run under way. Streamlit's status widget shows a run only once it has lasted 500 ms (its frontend's timer), so
# its absence alone passed during a run's first half-second; the app's root carries the run's state from its start
# (data-test-script-state: notRunning, running, rerunRequested, stopRequested, compilationError; initial before the
# first run).
IDLE = """() => { const app = document.querySelector('[data-testid="stApp"]');
  const state = app && app.getAttribute('data-test-script-state');
  return (state === 'notRunning' || state === 'compilationError')
    && !document.querySelector('[data-testid="stStatusWidget"]'); }"""


def wait_for_app_idle(page, timeout_ms: float = 90_000) -> None:
    """Wait until Streamlit has finished the current run: its state on the app's root, and no status widget."""
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE, timeout=timeout_ms, polling=100)


def wait_for_text(page, *texts: str, where: str = '[data-testid="stMain"]', timeout_ms: float = 120_000) -> str:
    """Until every one of these texts is on the page (inside `where`), then its text. A test asserts what it waited
    for: 'the app is idle' alone can come a moment before a part's last element has arrived."""
    handle = page.wait_for_function(
        "([where, texts]) => { const e = document.querySelector(where); const t = e ? e.innerText : '';"
        " return texts.every(x => t.includes(x)) ? t : null; }", arg=[where, list(texts)], timeout=timeout_ms,
        polling=100)
    return handle.json_value()


# JS: the page's title (its first heading) once it is not `before`: the page has begun to draw (a page switch shows the
# running status only after half a second, so "idle" alone can come before the new page's run)
NEW_HEADING = """(before) => { const h = document.querySelector('[data-testid="stMain"] h1');
  const t = h ? h.innerText.trim() : ''; return t && t !== before ? t : null; }"""


def heading_after(page, before: str = "", timeout_ms: float = 120_000) -> str:
    """Until the page's title is drawn and is not `before`; that title."""
    return page.wait_for_function(NEW_HEADING, arg=before, timeout=timeout_ms, polling=100).json_value()


def open_from_menu(page, server: str, path: str, before: str) -> str:
    """The page at `path` opened with the menu's own link, as a person moves through the menu: its section in the
    header (or the "N more" that folds the sections with no room), then the page's link in it. A switch inside the
    app, not a load of it (the sidebar's settings come along: ui/across_pages.py). Waits until the address is the
    page's and its title (returned) has replaced `before`. A switch cost Chromium 0.51-0.60 CPU-s a page, a load of
    the whole app 0.91-1.03 (8 warm pages, three rounds each way, each waited for until its title was new and it had
    been quiet for 1 s, 2026-11-28, with the menu in the sidebar)."""
    page.evaluate("() => { window.__attnvizSameDocument = true; }")  # gone if the click loads the app anew
    menu_link(page, server, path).click()
    page.wait_for_function("(p) => location.pathname === '/' + p", arg=path, timeout=60_000, polling=100)
    heading = heading_after(page, before)
    assert page.evaluate("() => window.__attnvizSameDocument === true"), f"the menu's link to /{path} reloaded the app"
    return heading


def menu_link(page, server: str, path: str):
    """The header menu's link to the page at `path`, shown: its section opened (the "N more" of the sections that
    have no room in the header, when its own is not there)."""
    nav = page.locator('[data-testid="stTopNav"]')
    section = nav.get_by_role("button", name=menu_section(path), exact=True)  # one folded away is aria-hidden
    if not section.count():
        section = nav.get_by_role("button", name=re.compile(r"^\d+ more$"))
    section.click()
    return page.locator(f'[data-testid="stTopNavDropdownLink"][href="{server}/{path}"]')


def header_menu(page) -> dict[str, list[str]]:
    """The header menu as a person reads it: each section shown (in order) -> the titles of the pages its menu lists,
    each section opened and closed in turn."""
    menu = {}
    for section in page.locator('[data-testid="stTopNav"]').get_by_role("button").all():
        section.click()
        links = page.locator('[data-testid="stTopNavPopover"] [data-testid="stTopNavDropdownLink"]')
        links.first.wait_for()
        # a link's text: its icon's name (a ligature of the icon font) on a line above its title
        menu[section.inner_text().strip()] = [link.inner_text().split("\n")[-1].strip() for link in links.all()]
        page.keyboard.press("Escape")
        links.first.wait_for(state="detached")
    return menu


# JS: the app idle and the header's menu drawn, unchanged for 500 ms (at a phone's width Streamlit moves it into the
# sidebar; back at a desk's, it draws the header's sections, then folds those with no room into "N more", a moment
# after: a click in between found neither)
MENU_IN_HEADER = """() => {
  const state = document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state');
  const nav = document.querySelector('[data-testid="stTopNav"]');
  const shown = nav ? [...nav.querySelectorAll('button')].filter(b => b.getClientRects().length
    && !b.closest('[aria-hidden="true"]')) : [];  // a section being measured for folding is aria-hidden
  const now = performance.now(), look = shown.map(b => b.innerText.trim()).join('|');
  if (state === 'running' || state === 'rerunRequested' || !shown.length || look !== window.__menuLook) {
    window.__menuLook = look; window.__menuSince = now; return false;
  }
  return now - window.__menuSince >= 500;
}"""


def resized(page, width: int, height: int) -> None:
    """The window at this size, once the app has laid itself out for it (and its header menu is back at a desk's
    width): a walk that looks at a page at a phone's width goes on through the menu after."""
    resized_together([page], width, height)


def resized_together(pages, width: int, height: int) -> None:
    """Several windows (each its own page: the lecture walk's projector and phone) at this size at once, each laid
    out for it as resized() waits for: their renderers lay them out side by side, and the waits overlap."""
    for page in pages:
        page.set_viewport_size({"width": width, "height": height})
    pages[0].wait_for_timeout(300)  # Streamlit's layout follows the width (the sidebar, columns, charts)
    for page in pages:
        page.wait_for_function(IDLE, timeout=60_000, polling=100)
    if width >= 1024:
        for page in pages:
            page.evaluate("() => { delete window.__menuLook; }")
        for page in pages:
            page.wait_for_function(MENU_IN_HEADER, timeout=60_000, polling=100)


def through_the_menu(page, server: str, paths: list[str], query: str = ""):
    """Each of `paths` in turn, yielded once its title is drawn: the first loaded from its address (with `query`), the
    others opened from the menu (open_from_menu), so a walk over many pages pays one load of the app."""
    page.goto(f"{server}/{paths[0]}{query}")
    heading = heading_after(page)
    yield paths[0]
    for path in paths[1:]:
        heading = open_from_menu(page, server, path, heading)
        yield path


def upload_plan(page, server: str, path) -> None:
    """A lecture plan (a TOML file) uploaded on the Lecture page, as a lecturer does."""
    page.goto(f"{server}/lecture")
    wait_for_text(page, "Lecture mode")
    wait_for_app_idle(page)
    page.get_by_text("Use your own plan").click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))


# JS: what the Lecture page shows while its room does not come: the run's state and the main column's last words
LECTURE_PAGE_NOW = """() => { const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMain"]');
  return { state: app && app.getAttribute('data-test-script-state'),
           text: main ? main.innerText.slice(-1500) : '(no main column)' }; }"""


def start_the_room(page, timeout_ms: float = 180_000):
    """Click "Start the class's room" on the Lecture page (drawn and idle) and wait until the room's links are drawn;
    the "Open step N on the projector" link. The server is shared by the run's three test processes and can take long
    on a busy machine; a click that Streamlit never ran (no room 60 s after it, the app idle, the button still there:
    seen once on a loaded CI machine, 2026-11-29) is clicked once more and said on stderr, as a lecturer would click
    again. (Streamlit's page says nothing of a click until the server starts its run, so a click is only taken for
    lost once a busy server would long have started it.) No room by the end: what the page showed then, in the failure."""
    start = page.get_by_role("button", name="Start the class's room")
    link = page.get_by_role("link", name=re.compile(r"^Open step \d+ on the projector$"))
    start.click()
    begun, clicks = time.monotonic(), 1
    while True:
        try:
            link.wait_for(timeout=10_000)
            return link
        except PlaywrightTimeout:
            pass
        now = page.evaluate(LECTURE_PAGE_NOW)
        if time.monotonic() - begun > timeout_ms / 1000:
            raise AssertionError(f"no room {timeout_ms / 1000:.0f} s after {clicks} click(s) on Start the class's "
                                 f"room; the app's run: {now['state']}; the page ends: {now['text']!r}")
        if clicks == 1 and time.monotonic() - begun > 60 and now["state"] == "notRunning" and start.is_visible():
            print(f"start_the_room: Streamlit did not run the click on Start the class's room "
                  f"({time.monotonic() - begun:.0f} s, app idle): clicked again", file=sys.stderr)
            start.click()
            clicks += 1


def exceptions_on(page) -> list[str]:
    return [e.inner_text() for e in page.query_selector_all('[data-testid="stException"]')]


# A lecture figure's heatmap words (token labels on both axes, panel titles) and a drawn diagram's words (the
# Transformer map's SVG) not wholly on the first screen: between the bottom edge of Streamlit's header, measured in the
# page (3.75rem: 60 px, and 71 px in presentation mode's larger type), and the window's bottom edge; [[text, top,
# bottom], ...], null: no figure.
# Every heatmap that begins on the first screen counts, and the figure's first heatmap always does; one that begins
# below it continues a figure taller than a screen by design (Step by step's chain: X first, then Q, K, V, ...).
FIGURE_LABELS_OFF_SCREEN = """(id) => {
  const box = document.querySelector('.st-key-figure_' + id);
  if (!box) return null;
  const header = document.querySelector('[data-testid="stHeader"]');
  const top = header ? header.getBoundingClientRect().bottom : 0;
  const words = [...box.querySelectorAll('.av-tmap svg text')].filter(t => t.textContent.trim());
  const hosts = [...box.querySelectorAll('[data-testid="stBidiComponentIsolated"]')];
  for (const [k, host] of hosts.entries()) {
    if (!host.shadowRoot || (k > 0 && host.getBoundingClientRect().top >= window.innerHeight)) continue;
    words.push(...host.shadowRoot.querySelectorAll('.avhm-lab, .avhm-title'));
  }
  const out = [];
  for (const e of words) {
    const r = e.getBoundingClientRect();
    if (r.height && (r.top < top - 1 || r.bottom > window.innerHeight + 1))
      out.push([e.textContent.trim().slice(0, 24), Math.round(r.top), Math.round(r.bottom)]);
  }
  return out;
}"""
