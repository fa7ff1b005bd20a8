"""The induction-heads and KV-cache pages in real Chromium at a projector's and a desktop's size, on the trained
tiny Llama: they draw, raise nothing, and the KV page shows the cached-vs-full proof. Screenshots in test-artifacts/."""

import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle, wait_for_heatmaps, wait_for_text

pytestmark = pytest.mark.browser  # real headless Chromium: left out by -m "not browser"

ARTIFACTS = ROOT / "test-artifacts"
SIZES = [(1024, 768), (1920, 1080)]


@pytest.mark.parametrize("width, height", SIZES)
@pytest.mark.parametrize("path, expected", [
    ("induction_heads", "The loss drops in the repeated half"),
    ("kv_cache", "Same tokens both ways"),
])
def test_page_draws_without_exception(server, path, expected, width, height):
    with chromium_page(width=width, height=height) as page:
        page.goto(f"{server}/{path}?model=tiny-llama")
        page.wait_for_selector('[data-testid="stSidebar"]', timeout=60_000)
        wait_for_app_idle(page, timeout_ms=180_000)
        wait_for_heatmaps(page, timeout_ms=60_000)
        main = wait_for_text(page, expected)  # waits for what it asserts: idle alone once came a moment early
        assert not exceptions_on(page), path
        assert "NaN" not in main
        page.screenshot(path=str(ARTIFACTS / f"page_{path}_{width}x{height}.png"))
