"""WCAG 2.1 A and AA by axe-core (tests/axe_check.py) in a real Chromium: every page of the menu, each at 1366×768 (a
laptop, a projector) and at 390×844 (a phone), the phone's menu opened too. A violation fails unless the accessibility
statement lists it as Streamlit's (docs/accessibility_faults.toml, with its upstream issue). Every step of every
shipped lecture plan is checked the same way, as the projector, a follower's phone and the presenter notes see it, by
the lecture walk (tests/browser/test_browser_lecture_walk.py), which also asks that every listed fault is still met.

Cost: one load of the app for the pages (the rest through the menu, axe put in once); a page is resized, not loaded
again, for its second size.
"""

from __future__ import annotations

import pytest
from apptest_helpers import app_menu
from axe_check import AxeLog, record_met
from browser_helpers import chromium_page, resized, through_the_menu, wait_until_settled

pytestmark = pytest.mark.browser

DESK, PHONE = (1366, 768), (390, 844)
PAGES = [path for _, path, _ in app_menu()]


def both_sizes(log: AxeLog, page, where: str, back: bool = True) -> None:
    """axe at the page's size now, then at the other: a resize, not a new load. `back`: then the first size again
    (the menu walk opens its next page from the header's menu, at a desk's width); else the page stays at the second,
    and the next step loads there (a resize, with its new layout and charts drawn again, saved per view)."""
    now = page.viewport_size
    first = (now["width"], now["height"])
    second = PHONE if first == DESK else DESK
    log.check(page, f"{where} at {first[0]}×{first[1]}")
    resized(page, *second)
    log.check(page, f"{where} at {second[0]}×{second[1]}")
    if back:
        resized(page, *first)


def phone_menu_checked(log: AxeLog, page, where: str) -> None:
    """On a phone the menu is in the sidebar, closed: axe with it opened, as a student opens it, then closed."""
    resized(page, *PHONE)
    page.get_by_role("button", name="Expand sidebar").click()
    page.locator('[data-testid="stSidebar"][data-collapsed="false"]').wait_for(timeout=30_000)
    page.wait_for_timeout(500)  # its slide in
    log.check(page, f"{where} at {PHONE[0]}×{PHONE[1]}, the menu opened")
    page.get_by_role("button", name="Collapse sidebar").click()
    page.locator('[data-testid="stSidebar"][data-collapsed="true"]').wait_for(state="attached", timeout=30_000)
    resized(page, *DESK)


def test_every_page_passes_axe_at_both_sizes(server, axe_walks):
    log = AxeLog()
    with chromium_page(*DESK) as page:
        for path in through_the_menu(page, server, PAGES):
            wait_until_settled(page, quiet_ms=500)
            both_sizes(log, page, f"/{path}")
            if path == PAGES[0]:
                phone_menu_checked(log, page, f"/{path}")
    record_met(axe_walks, "pages", log)  # a walk that ran to its end (tests/axe_check.py)
    assert not log.problems, log.report()
