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
    wait_for_text,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCROLL_MAIN = "(dy) => { const m = document.querySelector('[data-testid=stMain]'); const y = m.scrollTop; " \
              "m.scrollTop += dy; return m.scrollTop - y; }"

pytestmark = pytest.mark.browser


def screenshots(page, name: str, height: int, most: int = 4) -> None:
    for i in range(most):
        page.screenshot(path=str(ARTIFACTS / f"{name}_{i}.png"))
        if page.evaluate(SCROLL_MAIN, height - 120) <= 0:
            break
        page.wait_for_timeout(300)


@pytest.mark.parametrize("width,height,present", [(1024, 768, True), (1920, 1080, False)])
def test_tiny_bart_by_default_then_two_examples_in_a_row(server, width, height, present):
    with chromium_page(width, height) as page:
        page.goto(f"{server}/cross_attention" + ("?present=1" if present else ""))
        before = wait_for_heatmaps(page)
        wait_for_app_idle(page)
        text = wait_for_text(page, "3412", "matches transformers")
        assert "Its own answer" in text and "Reading the alignment" in text
        assert {"three", "twelve", "<s>→3", "1→2"} <= set(page.evaluate(TICK_TEXTS))
        assert page.get_by_text("projections applied across two sentences").count() == 0
        if present:  # the heatmaps are on the first screen on a projector
            first = page.evaluate("() => { const c = document.querySelector('.st-key-xa_grid_0'); "
                                  "return c ? c.getBoundingClientRect().top : 9999; }")
            assert first < height - 100, first
        assert not exceptions_on(page)
        screenshots(page, f"cross_attention_tiny_bart_{width}", height)
        page.evaluate(SCROLL_MAIN, -100_000)
        for example in ("42, 700, 9", "785412360 (long)"):
            page.locator('[data-testid="stSelectbox"]').filter(has_text="Examples").get_by_role("combobox").click()
            page.get_by_role("option", name=example).click()  # two quick changes: the second right after the first
        wait_for_text(page, "785412360")
        wait_for_app_idle(page)
        assert "seven" in page.evaluate(TICK_TEXTS) and "sixty" in page.evaluate(TICK_TEXTS)
        assert wait_for_heatmaps(page, previous=before) != before
        assert not exceptions_on(page)
        screenshots(page, f"cross_attention_long_{width}", height, most=1)
        box = page.get_by_label("Source: a number in words", exact=True).and_(page.get_by_test_id("stTextInputField"))
        box.fill("forty two cats")
        box.press("Enter")
        wait_for_text(page, "does not know 'cats'")
        assert not exceptions_on(page)
        page.screenshot(path=str(ARTIFACTS / f"cross_attention_unknown_word_{width}.png"))


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
