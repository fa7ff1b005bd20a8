"""A newcomer's first screen, each in a fresh browser (a new context: nothing remembered), with its screenshot in
test-artifacts/first_screen_<w>x<h>[_present].png for a person to look at:
- 1366×768: every section of the menu in the header, the explorer's Text, Model, Mask and scaling on the first screen
  (the sidebar's: under 24 links of a sidebar menu the Text box sat about 1,530 px down), and the welcome with its three
  ways in, each working: the notebook's code in its popover, the lecture link a switch to the Lecture page with the
  default plan;
- 1024×768 ?present=1: every section in the header, the row of controls on the first screen, no welcome;
- a phone (390×844): the welcome on the first screen, the menu in the sidebar with every page under its section, in a
  box of its own that scrolls, so the Text box under it is on the sidebar's first screen; a tap on a page switches to
  it and closes the sidebar, and the sidebar opened again shows that page's link in the menu's box."""

import pytest
from apptest_helpers import app_menu, menu_sections
from browser_helpers import ROOT, exceptions_on, people_browser, wait_for_heatmaps, wait_for_text, wait_until_settled

from attnviz.lecture import load_plan
from attnviz.paths import LECTURES
from ui.lecture.plans import DEFAULT
from ui.parts.welcome import NOTEBOOK

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
PHONE_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
               "Mobile Safari/537.36")  # Streamlit closes the sidebar after a tap on its menu for a phone's browser
SIDEBAR = ['[data-testid="stSidebar"] .st-key-text', '[data-testid="stSidebar"] .st-key-model',
           '[data-testid="stSidebar"] .st-key-mask', '[data-testid="stSidebar"] .st-key-scaled']
ROW = [f".st-key-presenter_controls {part}" for part in
       (".st-key-text", ".st-key-model", '[data-testid="stPopover"]', ".st-key-scaled")]  # the mask's in its popover
# JS: [selector, top, bottom] of each element not wholly on the first screen (or not there at all)
OFF_SCREEN = """(selectors) => selectors.flatMap(s => { const e = document.querySelector(s);
  if (!e) return [[s, null, null]];
  const r = e.getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight ? [] : [[s, r.top, r.bottom]]; })"""
# JS: the open page's link wholly inside the menu's box, on a phone (where the menu scrolls in a box of its own)
HERE_IN_THE_MENUS_BOX = """() => { const menu = document.querySelector('ul[data-testid="stSidebarNavItems"]');
  const here = menu && menu.querySelector('a[aria-current="page"]');
  if (!here || menu.scrollHeight <= menu.clientHeight) return false;
  const box = menu.getBoundingClientRect(), link = here.getBoundingClientRect();
  return link.top >= box.top && link.bottom <= box.bottom; }"""
SIDEBAR_OPEN = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  return !!s && s.getAttribute('data-collapsed') === 'false'; }"""



def default_plan():
    """The plan the welcome's lecture link opens, read as the app reads it."""
    return load_plan(LECTURES / f"{DEFAULT}.toml", {path: title for _, path, title in app_menu()})

def fresh_page(browser, width: int, height: int, phone: bool = False):
    extra = {"is_mobile": True, "has_touch": True, "user_agent": PHONE_AGENT} if phone else {}
    return browser.new_context(viewport={"width": width, "height": height}, **extra).new_page()


def first_screen(page, url: str, name: str) -> None:
    """The page at url drawn (heatmaps, fonts, formulas), and its first screen kept."""
    page.goto(url)
    wait_for_heatmaps(page)
    wait_until_settled(page, quiet_ms=1_000)
    page.screenshot(path=str(ARTIFACTS / f"first_screen_{name}.png"))
    assert not exceptions_on(page)


def header_sections(page) -> list[str]:
    """The sections the header's menu shows, in order (one folded under "N more" is not shown)."""
    return [b.inner_text().strip() for b in page.locator('[data-testid="stTopNav"]').get_by_role("button").all()]


def test_at_1366_the_menu_the_controls_and_the_ways_in_are_on_the_first_screen(server):
    plan = default_plan()
    with people_browser() as browser:
        page = fresh_page(browser, 1366, 768)
        first_screen(page, server + "/", "1366x768")
        assert header_sections(page) == list(menu_sections())
        assert page.evaluate(OFF_SCREEN, [*SIDEBAR, ".st-key-welcome"]) == []
        page.get_by_role("button", name="Use it from a notebook").click()
        code = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]')
        assert code.inner_text().strip() == NOTEBOOK
        page.keyboard.press("Escape")
        code.wait_for(state="detached")
        page.evaluate("() => { window.__attnvizSameDocument = true; }")
        page.get_by_role("link", name="Teach a lecture").click()
        wait_for_text(page, "Lecture mode", plan.title, f"Step 1 of {len(plan.steps)}")
        assert page.url == f"{server}/lecture?lecture={DEFAULT}"
        assert page.evaluate("() => window.__attnvizSameDocument === true"), "the lecture link reloaded the app"
        assert not exceptions_on(page)


def test_at_1024_on_a_projector_the_menu_and_the_row_of_controls_are_on_the_first_screen(server):
    with people_browser() as browser:
        page = fresh_page(browser, 1024, 768)
        first_screen(page, server + "/?present=1", "1024x768_present")
        assert header_sections(page) == list(menu_sections())
        assert page.evaluate(OFF_SCREEN, ROW) == []
        assert page.locator(".st-key-welcome").count() == 0  # the class came for the figures


def test_on_a_phone_the_welcome_then_the_menu_in_the_sidebar(server):
    titles = {path: title for _, path, title in app_menu()}
    with people_browser() as browser:
        page = fresh_page(browser, 390, 844, phone=True)
        first_screen(page, server + "/", "390x844")
        assert page.evaluate(OFF_SCREEN, [".st-key-welcome"]) == []
        assert not page.evaluate(SIDEBAR_OPEN) and page.locator('[data-testid="stTopNav"]').count() == 0
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.wait_for()
        page.wait_for_function(SIDEBAR_OPEN, timeout=10_000, polling=100)
        # the Text box on the sidebar's first screen, once the sidebar has slid in and laid out its menu (under the whole
        # menu it sat about 1,390 px down)
        page.wait_for_function(f"(s) => ({OFF_SCREEN})(s).length === 0", arg=[SIDEBAR[0]], timeout=10_000, polling=100)
        sections = [h.inner_text().strip() for h in nav.locator('[data-testid="stNavSectionHeader"]').all()]
        links = [a.inner_text().split("\n")[-1].strip() for a in nav.locator("a").all()]
        assert sections == list(menu_sections())
        assert links == [titles[path] for paths in menu_sections().values() for path in paths]
        page.screenshot(path=str(ARTIFACTS / "first_screen_390x844_menu.png"))
        page.evaluate("() => { window.__attnvizSameDocument = true; }")
        nav.locator(f'a[href="{server}/kv_cache"]').click()
        page.wait_for_function("() => location.pathname === '/kv_cache'", timeout=60_000, polling=100)
        page.wait_for_function(f"() => !({SIDEBAR_OPEN})()", timeout=10_000, polling=100)
        assert page.evaluate("() => window.__attnvizSameDocument === true"), "the menu's link reloaded the app"
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        page.wait_for_function(HERE_IN_THE_MENUS_BOX, timeout=10_000, polling=100)  # under the box's edge before
        assert not exceptions_on(page)
