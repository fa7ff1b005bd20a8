"""No request leaves the server: every page's icons, fonts, scripts and pictures come from the app itself.

A lecture hall's network may have no internet, and a request to an outside host tells a third party who opened
the class's page. Chromium (started without its own background traffic) records every request the pages make;
any to a host other than the server fails the test.
"""

import os
from urllib.parse import urlparse

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import chromium_page, exceptions_on, wait_for_app_idle

pytestmark = pytest.mark.browser

# the pages that draw every kind of element the app has: heatmaps, plotly charts, math, tables, icons
PAGES = ["", "step_by_step", "masks_lab", "efficient_attention", "model_view"]
LOCAL = {"127.0.0.1", "localhost", "::1"}


def test_no_page_asks_another_host_for_anything(server):
    outside, asked = [], 0
    with chromium_page() as page:

        def record(request):
            nonlocal asked
            asked += 1
            url = urlparse(request.url)
            if url.scheme not in ("data", "blob", "about") and url.hostname not in LOCAL:
                outside.append(request.url)

        page.on("request", record)
        for path in PAGES:
            page.goto(f"{server}/{path}?model=toy")
            wait_for_app_idle(page, timeout_ms=120_000)
            page.wait_for_timeout(1500)  # icons and fonts load after the run
            assert not exceptions_on(page), path
        icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    assert asked > 20  # the pages were drawn (scripts, styles, fonts), so the recording saw them
    assert icon and all(urlparse(h).hostname in LOCAL or h.startswith("data:") for h in icon), icon
    assert not outside, f"requests to other hosts: {sorted(set(outside))}"
