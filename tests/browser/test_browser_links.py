"""The address bar Chromium holds after changes, against tests/link_round_trip.address_of (what the AppTest round trip
takes for the browser's link), and that address opened in a fresh page: the same view. Also a link longer than a
server takes is never written: a text past the link budget leaves the address, with the page's note."""

from urllib.parse import parse_qs, urlsplit

import pytest
from apptest_helpers import run_app
from browser_helpers import (
    chromium_page,
    exceptions_on,
    in_own_thread,
    wait_for_app_idle,
    wait_for_heatmaps,
    wait_for_text,
)
from link_round_trip import address_of

from ui.pickers import LINK_VALUE_BYTES

pytestmark = pytest.mark.browser


def query_of(page) -> dict:
    return {k: v[0] if len(v) == 1 else v for k, v in parse_qs(urlsplit(page.url).query, keep_blank_values=True).items()}


def address_after_the_same_changes() -> dict:
    """The address the AppTest round trip takes after the changes the browser test makes."""
    at = run_app({"model": "toy"})
    at.text_area(key="text").set_value("Bright students ask sharp questions").run()
    at.toggle(key="scaled").set_value(False).run()
    at.run()
    return address_of(at)


def test_the_address_chromium_writes_is_the_one_the_round_trip_takes_and_reopens_the_view(server):
    with chromium_page() as page:
        page.goto(server + "/?model=toy")
        wait_for_heatmaps(page)
        box = page.get_by_label("Text", exact=True)
        box.fill("Bright students ask sharp questions")
        box.press("Control+Enter")
        page.wait_for_function("() => location.search.includes('sharp')", timeout=120_000, polling=100)
        page.get_by_text("Scale scores by 1/√d_k").click()
        page.wait_for_function("() => location.search.includes('scaled=false')", timeout=120_000, polling=100)
        wait_for_app_idle(page)
        written, link_query = query_of(page), urlsplit(page.url).query  # the link as copied from the address bar
        drawn_before = wait_for_text(page, "Scaling is off")
    assert in_own_thread(address_after_the_same_changes) == written
    with chromium_page() as fresh:
        fresh.goto(server + "/?" + link_query)
        wait_for_heatmaps(fresh)
        assert fresh.get_by_label("Text", exact=True).input_value() == "Bright students ask sharp questions"
        assert "Scaling is off" in wait_for_text(fresh, "Scaling is off") and "Scaling is off" in drawn_before
        assert query_of(fresh) == written and not exceptions_on(fresh)


def test_a_text_past_the_link_budget_leaves_the_address_with_a_note(server):
    with chromium_page() as page:
        page.goto(server + "/?model=toy")
        wait_for_heatmaps(page)
        box = page.get_by_label("Text", exact=True)
        box.fill("word " * (LINK_VALUE_BYTES // 5 + 10))
        box.press("Control+Enter")
        wait_for_text(page, "too long for a link", where='[data-testid="stSidebar"]')
        wait_for_app_idle(page)
        assert "text" not in query_of(page) and not exceptions_on(page)
