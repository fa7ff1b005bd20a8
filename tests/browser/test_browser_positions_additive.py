"""The positions and additive vs dot-product pages in real headless Chromium at a projector's and a desktop's size.

Streamlit scrolls inside its own container, so each page is photographed screen by screen into
test-artifacts/ (positions_1024x768_0.png, ...) for a person to look at.
"""

import os
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import chromium_page, exceptions_on, wait_for_app_idle, wait_for_heatmaps, wait_for_text

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SIZES = [(1024, 768), (1920, 1080)]
SCROLLER = "document.querySelector('[data-testid=\"stMain\"]')"

pytestmark = pytest.mark.browser


def photograph(page, name: str, height: int, most: int = 12) -> int:
    """Screenshots down the whole page; returns how many."""
    total = page.evaluate(f"{SCROLLER}.scrollHeight")
    shots = 0
    for shots, y in enumerate(range(0, total, height - 100)):
        if shots >= most:
            break
        page.evaluate(f"{SCROLLER}.scrollTo(0, {y})")
        page.wait_for_timeout(400)
        page.screenshot(path=str(ARTIFACTS / f"{name}_{shots}.png"))
    return shots + 1


def no_horizontal_overflow(page) -> bool:
    return page.evaluate(f"{SCROLLER}.scrollWidth <= {SCROLLER}.clientWidth + 1")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_positions_page(server, width, height):
    with chromium_page(width, height) as page:
        page.goto(f"{server}/positions?text=The+cat+sat+on+the+mat.")
        wait_for_heatmaps(page)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert not exceptions_on(page)
        body = wait_for_text(page, "Without positions", "Sinusoidal positions", "Learned position embeddings",
                             "Rotary position", "toy (no positions)", where="body")
        assert "NaN" not in body
        # the permuted-vs-original difference is float32 rounding: a tiny negative value is printed "0.00", not "−0.00"
        cells = page.evaluate("""() => { const h = window.attnvizHeatmaps['pos_perm_diff_0'], m = h.meta(), out = [];
            for (let r = 0; r < m.rows; r++) for (let c = 0; c < m.cols; c++) out.push([h.value(0, r, c), h.printed(0, r, c)]);
            return out; }""")
        tiny_negatives = [text for value, text in cells if -0.005 < value < 0]
        assert tiny_negatives and set(tiny_negatives) == {"0.00"}
        assert "−0.00" not in {text for _, text in cells}
        assert no_horizontal_overflow(page)
        assert photograph(page, f"positions_{width}x{height}", height) >= 3


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_additive_page(server, width, height):
    with chromium_page(width, height) as page:
        page.goto(f"{server}/additive_attention?add_how=fitted")
        wait_for_heatmaps(page)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert not exceptions_on(page)
        body = wait_for_text(page, "fit loss after", "What each costs", where="body")
        assert "NaN" not in body
        assert no_horizontal_overflow(page)
        assert photograph(page, f"additive_{width}x{height}", height) >= 2
