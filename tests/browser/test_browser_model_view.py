"""The model view in a real headless Chromium: the thumbnail grid is the canvas component holding attnviz's
pooled patterns, and a click on a thumbnail enlarges that head (the pickers and the link follow)."""

import os
from pathlib import Path
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import (
    DRAWN_CHARTS,
    cell_on_screen,
    chromium_page,
    exceptions_on,
    wait_for_app_idle,
    wait_for_drawn,
)

from attnviz.analysis.stats import head_statistics
from attnviz.lessons.model_view import thumbnail_titles, thumbnails

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TEXT = "the cat sat on the mat"
pytestmark = pytest.mark.browser

# JS, on a combobox: the option its keys are on (its aria-activedescendant), by its text
FOCUSED_OPTION = """(box) => { const id = box.getAttribute('aria-activedescendant');
  const option = id && document.getElementById(id); return option ? option.innerText.trim() : null; }"""


def open_model_view(page, url: str, query: str) -> None:
    page.goto(f"{url}/model_view?{query}")
    wait_for_drawn(page, ["mv_grid", "mv_focus"])


def focus_values(page) -> np.ndarray:
    return np.array(page.evaluate("() => window.attnvizHeatmaps.mv_focus.values(0)"), dtype=np.float64)


def click_thumbnail(page, panel: int, row: int = 1, col: int = 1) -> None:
    """Click a cell of a thumbnail where the component says it is; wait until the enlarged head is redrawn."""
    at = cell_on_screen(page, "mv_grid", panel, row, col)
    before = page.evaluate("() => window.attnvizHeatmaps.mv_focus.drawn")
    page.mouse.click(at["x"], at["y"])
    page.wait_for_function("(b) => window.attnvizHeatmaps.mv_focus.drawn !== b", arg=before, timeout=60_000, polling=50)
    wait_for_app_idle(page)


def test_the_grid_holds_attnviz_thumbnails_and_a_click_enlarges_that_head(server, toy):
    with chromium_page(width=1024, height=768) as page:
        open_model_view(page, server, f"model=toy&text={quote(TEXT)}")
        res = toy.run(TEXT)
        pooled, labels, _ = thumbnails(res.attentions, res.labels)
        meta = page.evaluate("() => window.attnvizHeatmaps.mv_grid.meta()")
        assert meta["thumbnails"] and meta["titles"] == thumbnail_titles(2, 2) and meta["row_labels"] == labels
        drawn = np.array(page.evaluate("() => [0, 1, 2, 3].map(p => window.attnvizHeatmaps.mv_grid.values(p))"))
        np.testing.assert_allclose(drawn, pooled, atol=0.5 / 254 + 1e-7)  # uint8 thumbnails
        assert page.evaluate(DRAWN_CHARTS) >= 3  # the grid, the enlarged head, the rollout
        # the statistics map is a table in the page: each head's value in its cell, the table within its column
        stats = head_statistics(res.attentions, res.tokens)
        shown = page.evaluate("""() => [...document.querySelectorAll('.av-map td')].map(
                                       td => [Number(td.dataset.value), td.textContent])""")
        np.testing.assert_allclose([v for v, _ in shown], [r["entropy"] for r in stats], rtol=1e-5)
        assert [t for _, t in shown] == [f"{r['entropy']:.2f}" for r in stats]
        assert page.evaluate("""() => { const s = document.querySelector('.av-map-scroll');
                                        return s.scrollWidth <= s.clientWidth + 1; }""")
        assert page.evaluate("() => window.attnvizHeatmaps.mv_grid.highlight()") == 0

        click_thumbnail(page, 3)  # panel 3 = layer 1, head 1
        np.testing.assert_allclose(focus_values(page), res.attentions[1, 1].numpy(), atol=1e-4)
        assert page.evaluate("() => window.attnvizHeatmaps.mv_grid.highlight()") == 3
        assert "mv_layer=1" in page.url and "mv_head=1" in page.url
        page.screenshot(path=str(ARTIFACTS / "model_view_clicked_1024x768.png"))

        click_thumbnail(page, 1)  # layer 0, head 1: and back to the same cell of panel 3, which counts again
        np.testing.assert_allclose(focus_values(page), res.attentions[0, 1].numpy(), atol=1e-4)
        click_thumbnail(page, 3)
        np.testing.assert_allclose(focus_values(page), res.attentions[1, 1].numpy(), atol=1e-4)

        gap = page.evaluate("""() => { const h = window.attnvizHeatmaps.mv_grid, n = h.meta().cols;
                                 const a = h.cellCenter(0, 0, n - 1), b = h.cellCenter(1, 0, 0);
                                 return {x: (a.x + b.x) / 2, y: a.y}; }""")  # between two thumbnails
        page.mouse.click(gap["x"], gap["y"])
        page.wait_for_timeout(1_000)
        np.testing.assert_allclose(focus_values(page), res.attentions[1, 1].numpy(), atol=1e-4)
        assert page.evaluate("() => window.attnvizHeatmaps.mv_grid.highlight()") == 3
        assert not exceptions_on(page)


def test_a_picker_choice_after_a_click_stays(server, minilm):
    text = "The cat sat on the mat because it was tired."
    with chromium_page(width=1920, height=1080) as page:
        open_model_view(page, server, f"text={quote(text)}")
        res = minilm.run(text)
        assert page.evaluate("() => window.attnvizHeatmaps.mv_grid.meta().panels") == 72
        click_thumbnail(page, 41, 3, 4)  # layer 3, head 5
        np.testing.assert_allclose(focus_values(page), res.attentions[3, 5].numpy(), atol=1e-4)
        before = page.evaluate("() => window.attnvizHeatmaps.mv_focus.drawn")
        picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Head").get_by_role("combobox")
        # Inside the full suite a click on the open list's option failed 4 times in 8 runs (never alone): the option
        # moved, then was gone for good, the list closed. The likely cause (not seen happen): a click first scrolls
        # its target into view, and a page that scrolls under an open list closes it. So the picker is brought to the
        # middle of the window, and the keys choose (the list scrolls itself to the option the keys are on)
        picker.evaluate("(e) => e.scrollIntoView({block: 'center'})")
        picker.click()
        picker.press("ArrowDown")  # opens its list (a click alone only focuses it in headless Chromium)
        for _ in range(12):
            if picker.evaluate(FOCUSED_OPTION) == "1":
                break
            picker.press("ArrowUp")
        assert picker.evaluate(FOCUSED_OPTION) == "1"
        picker.press("Enter")  # head 1
        page.wait_for_function("(b) => window.attnvizHeatmaps.mv_focus.drawn !== b", arg=before, timeout=60_000,
                               polling=100)
        wait_for_app_idle(page)
        page.wait_for_timeout(800)  # a stale click would come back on this rerun
        np.testing.assert_allclose(focus_values(page), res.attentions[3, 1].numpy(), atol=1e-4)
        assert page.evaluate("() => window.attnvizHeatmaps.mv_grid.highlight()") == 3 * 12 + 1
        page.screenshot(path=str(ARTIFACTS / "model_view_picked_1920x1080.png"))
        assert not exceptions_on(page)
