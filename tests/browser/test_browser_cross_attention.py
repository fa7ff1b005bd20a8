"""The Cross-attention page in a real headless Chromium at projector and desktop sizes.

Screenshots (viewport only, scrolled through the page) go to test-artifacts/ for a person to look at.
"""

import os
from pathlib import Path
from urllib.parse import urlencode

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import (
    TICK_TEXTS,
    chromium_page,
    exceptions_on,
    wait_for_app_idle,
    wait_for_heatmaps,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SIZES = [(1024, 768), (1920, 1080)]
SCROLL_MAIN = "(dy) => { const m = document.querySelector('[data-testid=stMain]'); const y = m.scrollTop; " \
              "m.scrollTop += dy; return m.scrollTop - y; }"

pytestmark = pytest.mark.browser


def screenshots(page, name: str, height: int, most: int = 4) -> None:
    for i in range(most):
        page.screenshot(path=str(ARTIFACTS / f"{name}_{i}.png"))
        if page.evaluate(SCROLL_MAIN, height - 120) <= 0:
            break
        page.wait_for_timeout(300)


@pytest.mark.parametrize("width,height", SIZES)
def test_demonstration_then_a_new_target(server, width, height):
    query = {"xa_source": "The cat sat on the mat.", "xa_target": "Le chat était assis sur le tapis."}
    with chromium_page(width, height) as page:
        page.goto(f"{server}/cross_attention?{urlencode(query)}")
        before = wait_for_heatmaps(page)
        wait_for_app_idle(page)
        ticks = set(page.evaluate(TICK_TEXTS))
        assert {"mat", "chat", "tap"} <= ticks
        assert page.get_by_text("projections applied across two sentences").count() >= 1
        assert not exceptions_on(page)
        screenshots(page, f"cross_attention_demo_{width}", height)
        box = page.get_by_label("Target (written by the decoder: queries)")
        box.fill("The dog sleeps.")
        box.press("Control+Enter")
        page.wait_for_function(f"() => ({TICK_TEXTS})().includes('dog')", timeout=60_000, polling=100)
        assert wait_for_heatmaps(page, previous=before) != before
        wait_for_app_idle(page)
        assert not exceptions_on(page)


def test_tiny_bart_folder_shows_real_cross_attention(server, tiny_model_folder):
    query = {"model": "other", "model_path": str(tiny_model_folder("bart")), "xa_source": "The cat sat on the mat.",
             "xa_target": "A dog ran after the cat!"}
    with chromium_page(1920, 1080) as page:
        page.goto(f"{server}/cross_attention?{urlencode(query)}")
        wait_for_heatmaps(page)
        wait_for_app_idle(page)
        page.get_by_text("matches transformers").wait_for(timeout=60_000)
        assert page.get_by_text("projections applied across two sentences").count() == 0
        assert not exceptions_on(page)
        screenshots(page, "cross_attention_bart_1920", 1080)
