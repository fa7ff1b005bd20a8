"""Projector-ready, in a real headless Chromium: presentation mode's metric values and the numbers printed in heatmap
cells at a projector's size. That every page fits 1024×768 and 1920×1080 (no horizontal overflow, no LaTeX block wider
than its column) is checked by the one walk over every page (tests/browser/test_browser.py), which keeps its pictures
in test-artifacts/projector_<page>_<w>x<h>.png.
"""

import os
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import chromium_page, exceptions_on, wait_until_settled

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.browser


def settle(page) -> None:
    """Wait until the page's runs are over and it has stayed quiet for 1.5 s: a first visit connects, then starts the
    run, then loads the model, and KaTeX and the charts draw after the run ends (one idle check can come too early).
    It waited 4 s for a run to start, which had often ended already, then 1 s, then 1 s more: 6 s a page."""
    wait_until_settled(page, quiet_ms=1_500)


METRIC_VALUE_PX = """() => parseFloat(getComputedStyle(document.querySelector(
  '[data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p')).fontSize)"""


def test_presentation_mode_makes_metric_values_larger_not_smaller(server):
    """Presentation mode enlarges paragraphs; a metric's value is a paragraph too, and must not shrink to body size."""
    with chromium_page(width=1280, height=720) as page:
        sizes = {}
        for query in ("", "?present=1"):
            page.goto(f"{server}/scaling_lab{query}")
            page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
            settle(page)
            sizes[query] = page.evaluate(METRIC_VALUE_PX)
        assert sizes["?present=1"] > sizes[""] >= 30, sizes


PRINTED = """() => Object.entries(window.attnvizHeatmaps || {}).filter(([, h]) => h.meta().show_values)
  .map(([key, h]) => [key, h.valuesPx(), h.note(), h.meta().cols])"""


LONG = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"


@pytest.mark.parametrize("long", [False, True], ids=["short text", "16 words"])
def test_numbers_in_heatmap_cells_are_20_px_on_a_projector_or_left_to_the_hover(server, long):
    """On a projector (1024×768 ?present=1) a number printed in a cell is at least 20 px (it was 13 px at most);
    where the cells are too small for that, none is printed and the figure says the values are on hover."""
    with chromium_page(width=1024, height=768) as page:
        text = LONG if long else "A dog ran home."
        page.goto(f"{server}/step_by_step?model=toy&present=1&text={text.replace(' ', '%20')}")
        page.wait_for_function(f"() => ({PRINTED})().length > 0", timeout=120_000, polling=200)
        settle(page)
        printed = page.evaluate(PRINTED)
        for key, px, note, _ in printed:
            assert px >= 20 or (px == 0 and "hover a cell for its value" in note), (key, px, note)
        if not long:  # a short text's cells (up to 56 px) hold 20 px numbers: some are printed
            assert any(px >= 20 for _, px, _, _ in printed), printed
        else:  # 16 tokens: a 16 × 16 matrix's cells are too small for 20 px numbers
            assert any(px == 0 for _, px, _, _ in printed), printed
            note = page.locator(".avhm-note", has_text="hover a cell").first
            assert float(note.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 20
            note.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"projector_values_{'long' if long else 'short'}.png"),
                        full_page=False)
        assert not exceptions_on(page)
