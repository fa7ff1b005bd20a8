"""The efficient-attention page in a real headless Chromium: drawn without errors, screenshots for a person to look at."""

import os
import re
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import (
    DRAWN_CHARTS,
    chromium_page,
    exceptions_on,
    wait_for_app_idle,
    wait_for_heatmaps,
    wait_for_text,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width, height", [(1024, 768), (1920, 1080)])
def test_efficient_page_draws_patterns_and_cost_charts(server, width, height):
    with chromium_page(width, height) as page:  # the worker's server (tests/browser/conftest.py), not one per test
        page.goto(server + "/efficient_attention?model=toy&eff_method=window&eff_max_n=512")
        wait_for_heatmaps(page)
        page.wait_for_function(f"() => ({DRAWN_CHARTS})() >= 5", timeout=120_000, polling=100)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert not exceptions_on(page)
        body = wait_for_text(page, "What it trades", where="body")
        assert re.search(r"(is faster than exact attention from n = \d+|is not faster than exact attention at any n)", body)
        assert "NaN" not in body
        page.screenshot(path=str(ARTIFACTS / f"efficient_{width}x{height}.png"), full_page=True)
