"""Each kind of scale drawn by the component in a real Chromium: its colours, its legend's words, its hover.

The page is tests/browser/kinds_app.py: one heatmap per kind, the component registered from
attnviz.components.heatmap's joined JS. A screenshot of the four goes to test-artifacts/heatmap_kinds.png.
"""

from pathlib import Path

import numpy as np
import pytest
from browser_helpers import CHROMIUM, ROOT, cell_on_screen, chromium_page, exceptions_on, streamlit_server, wait_for_drawn
from kinds_app import kind_matrices

pytestmark = pytest.mark.browser
KEYS = [f"kind_{k}" for k in ("weights", "signed", "magnitude", "mask")]
GREY, GREEN, WHITE, DARK_RED = [158, 158, 158, 255], [46, 125, 50, 255], [247, 247, 247, 255], [103, 0, 31, 255]


@pytest.fixture(scope="module")
def page_of_kinds():
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: run tests/install_browser.sh"
    with streamlit_server(script="tests/browser/kinds_app.py") as url, chromium_page(width=1400, height=1000) as page:
        page.goto(url)
        wait_for_drawn(page, KEYS)
        yield page


def legend_of(page, key: str) -> str:
    return page.locator(f'.avhm[data-name="{key}"] .avhm-legend').inner_text()


def pixel(page, key: str, r: int, c: int) -> list[int]:
    return page.evaluate(f"() => window.attnvizHeatmaps['{key}'].pixel(0, {r}, {c})")


def hover(page, key: str, r: int, c: int) -> str:
    at = cell_on_screen(page, key, 0, r, c)
    page.mouse.move(at["x"], at["y"])
    tip = page.locator(f'.avhm[data-name="{key}"] .avhm-tip')
    tip.wait_for(state="visible", timeout=10_000)
    return tip.inner_text()


def test_each_kind_draws_its_values_with_its_own_legend(page_of_kinds):
    page, kinds = page_of_kinds, kind_matrices()
    for key in KEYS:
        kind = key.removeprefix("kind_")
        meta = page.evaluate(f"() => window.attnvizHeatmaps['{key}'].meta()")
        values = np.array(page.evaluate(f"() => window.attnvizHeatmaps['{key}'].values(0)"), dtype=np.float64)
        expected = kinds[kind][0]
        expected = np.where(expected, 0.0, -np.inf) if kind == "mask" else expected
        assert meta["kind"] == kind
        np.testing.assert_allclose(values, expected, atol=1e-4)
    page.screenshot(path=str(ROOT / "test-artifacts" / "heatmap_kinds.png"), full_page=True)
    assert "weight after softmax" in legend_of(page, "kind_weights")
    assert "−∞ (masked)" in legend_of(page, "kind_signed")  # S″ holds −∞: its grey is named
    assert "value ≥ 0" in legend_of(page, "kind_magnitude")
    mask_legend = legend_of(page, "kind_mask")
    assert "0 (may attend)" in mask_legend and "−∞ (masked)" in mask_legend
    assert page.locator('.avhm[data-name="kind_mask"] canvas.avhm-bar').count() == 0  # two colours: no bar
    assert page.locator('.avhm[data-name="kind_magnitude"] .avhm-ticks').inner_text().split()[0] == "0"
    assert not exceptions_on(page)


def test_a_mask_is_green_where_it_may_attend_and_grey_where_masked(page_of_kinds):
    assert pixel(page_of_kinds, "kind_mask", 3, 1) == GREEN and pixel(page_of_kinds, "kind_mask", 1, 3) == GREY
    assert pixel(page_of_kinds, "kind_signed", 1, 3) == GREY  # −∞ is grey in every kind that holds it
    assert hover(page_of_kinds, "kind_mask", 1, 3).splitlines()[-1] == "M: −∞ (masked)"
    assert hover(page_of_kinds, "kind_mask", 3, 1).splitlines()[-1] == "M: 0 (may attend)"
    printed = [page_of_kinds.evaluate(f"() => window.attnvizHeatmaps.kind_mask.printed(0, {r}, {c})")
               for r, c in ((3, 1), (1, 3))]
    assert printed == ["0", "−∞"]  # exact values, not "0.00"


def test_a_masks_png_carries_its_two_named_colours(page_of_kinds):
    with page_of_kinds.expect_download(timeout=20_000) as download:
        page_of_kinds.locator('.avhm[data-name="kind_mask"] .avhm-png').click()
    png = Path(download.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and download.value.suggested_filename.endswith(".png")
    (ROOT / "test-artifacts" / "heatmap_kinds_mask_download.png").write_bytes(png)  # for a person to look at


def test_a_magnitude_runs_from_white_at_0_to_dark_red_at_its_largest(page_of_kinds):
    z = kind_matrices()["magnitude"][0]
    zero = np.argwhere(z == 0)[0]
    top = np.unravel_index(np.argmax(z), z.shape)
    assert pixel(page_of_kinds, "kind_magnitude", *zero) == WHITE
    assert pixel(page_of_kinds, "kind_magnitude", *top) == DARK_RED
    assert hover(page_of_kinds, "kind_magnitude", *top).splitlines()[-1] == f"value: {z[top]:.3f}"
