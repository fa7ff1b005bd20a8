"""The canvas heatmap component in a real headless Chromium: what it drew equals attnviz's numbers, a toggle
redraws it, a click shows that cell's arithmetic, and the explorer fits its columns at 1024 and 1920 px.

The component files what it drew under window.attnvizHeatmaps[key] (decoded values, labels, a checksum,
cell positions): the tests read it there, and click where it says a cell is.
"""

import os
import re
from pathlib import Path
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import (
    cell_on_screen,
    chromium_page,
    exceptions_on,
    people_browser,
    wait_for_app_idle,
    wait_for_drawn,
)

from attnviz.lessons.step_by_step.steps import head_steps, pair_detail

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TEXT = "Bright students ask sharp questions"
pytestmark = pytest.mark.browser


def open_explorer(page, url: str, query: str) -> None:
    page.goto(f"{url}/?{query}")
    wait_for_drawn(page, ["grid", "focus_head"])


def drawn_panels(page, key: str = "grid") -> tuple[dict, np.ndarray]:
    meta = page.evaluate(f"() => window.attnvizHeatmaps['{key}'].meta()")
    values = page.evaluate(f"() => [...Array(window.attnvizHeatmaps['{key}'].meta().panels).keys()]"
                           f".map(p => window.attnvizHeatmaps['{key}'].values(p))")
    return meta, np.array(values, dtype=np.float64)


def click_cell(page, panel: int, row: int, col: int, key: str = "grid") -> None:
    at = cell_on_screen(page, key, panel, row, col)
    page.mouse.click(at["x"], at["y"])


def in_short(page, previous: str | None = None) -> dict[str, str]:
    """The numbers of the 'In short' line of 'why this weight', once it shows (and differs from previous)."""
    handle = page.wait_for_function(
        """(prev) => { const p = [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
             .find(e => e.textContent.startsWith('In short')); return p && p.textContent !== prev ? p.textContent : null; }""",
        arg=previous, timeout=60_000, polling=100)
    text = handle.json_value()
    numbers = re.findall(r"(−?\d+\.\d+|−∞)", text)
    return {"text": text, **dict(zip(["dot", "scaled", "masked", "weight"], numbers, strict=True))}


def plain(x: float) -> str:
    return "−∞" if x == float("-inf") else f"{x:.4f}".replace("-", "−")


def test_grid_holds_attnviz_weights_and_a_scaling_toggle_redraws_it(server, toy):
    with chromium_page() as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}")
        res = toy.run(TEXT)
        meta, drawn = drawn_panels(page)
        assert meta["row_labels"] == meta["col_labels"] == res.labels
        np.testing.assert_allclose(drawn, res.attentions[0].numpy(), atol=1e-5)
        labels = page.evaluate("() => window.attnvizHeatmaps.grid.labels()")
        assert {"bright", "students", "questions"} <= set(labels)
        before = page.evaluate("() => window.attnvizHeatmaps.grid.drawn")
        assert page.evaluate("() => window.attnvizHeatmaps.grid.switch()") == {"control": "scaled",
                                                                               "states": [True, False]}
        page.get_by_text("Scale scores by 1/√d_k").click()
        swapped = page.wait_for_function("(b) => { const g = window.attnvizHeatmaps.grid; return g.drawn !== b && g.drawn; }",
                                         arg=before, timeout=60_000, polling=50).json_value()
        wait_for_app_idle(page)
        _, redrawn = drawn_panels(page)
        np.testing.assert_allclose(redrawn, toy.run(TEXT, scale=False).attentions[0].numpy(), atol=1e-5)
        # the browser drew the unscaled state itself, from the payload's second state, as the switch flipped;
        # the rerun's payload then held the same cells (the grid and the enlarged head, one swap each)
        grid, focus = (page.evaluate(f"() => window.attnvizHeatmaps.{k}.swaps") for k in ("grid", "focus_head"))
        assert grid == focus == 1
        assert page.evaluate("() => window.attnvizHeatmaps.grid.drawn") == swapped
        # each update redraws the component's one heatmap in place, never adds another below it
        assert page.evaluate(HEATMAPS_PER_COMPONENT) == [1] * len(page.evaluate("() => Object.keys(window.attnvizHeatmaps)"))
        assert not exceptions_on(page)


HEATMAPS_PER_COMPONENT = """() => [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
  .filter(h => h.shadowRoot).map(h => h.shadowRoot.querySelectorAll('.avhm').length)"""


# the component's colour maps, written out again here as the test's own oracle: 256 colours between the stops
VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"]
RDBU_R = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b",
          "#67001f"]
GREY = (158, 158, 158)  # a masked (−∞) cell
MAY_ATTEND = (46, 125, 50)  # a mask's 0


def colour_table(stops: list[str]) -> np.ndarray:
    rgb = np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in stops], dtype=np.float64)
    t = np.arange(256) / 255 * (len(stops) - 1)
    k = np.minimum(np.floor(t).astype(int), len(stops) - 2)
    f = (t - k)[:, None]
    return np.floor(rgb[k] * (1 - f) + rgb[k + 1] * f + 0.5)  # (256, 3), rounded as JS's Math.round


def assert_painted(pixels: np.ndarray, values: np.ndarray, lo: float, hi: float, stops: list[str]) -> None:
    """Every pixel (rows, cols, RGBA) is opaque and the colour of its value on lo..hi (a neighbouring colour where
    the value sits on a rounding edge), or grey where the value is −∞."""
    assert (pixels[..., 3] == 255).all()
    table, rgb = colour_table(stops), pixels[..., :3]
    masked = np.isneginf(values)
    assert (rgb[masked] == GREY).all()
    index = np.floor((np.where(masked, lo, values) - lo) / (hi - lo) * 255 + 0.5).clip(0, 255).astype(int)
    near = np.stack([np.abs(rgb - table[np.clip(index + d, 0, 255)]).max(-1) for d in (-1, 0, 1)]).min(0)
    assert (near[~masked] == 0).all(), f"{int((near[~masked] > 0).sum())} cells in the wrong colour"


def drawn_pixels(page, key: str, panel: int) -> np.ndarray:
    return np.array(page.evaluate(
        f"""() => {{ const h = window.attnvizHeatmaps['{key}'], m = h.meta();
          return [...Array(m.rows).keys()].map(r => [...Array(m.cols).keys()].map(c => h.pixel({panel}, r, c))); }}"""))


def test_every_cell_is_painted_in_the_colour_of_its_value(server, toy):
    """Weights (2 bytes a cell) on viridis 0..1; a mask's M (1 bit a cell) on the diverging map, −∞ grey."""
    with chromium_page() as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}&mask=causal")
        meta, drawn = drawn_panels(page)
        assert meta["ranges"][1] == [0, 1]
        assert_painted(drawn_pixels(page, "grid", 1), drawn[1], 0.0, 1.0, VIRIDIS)
        assert np.isclose(drawn[1], 0).sum() > 5  # the causal mask's zeros are there and painted too

        page.goto(f"{server}/masks_lab?model=toy&text={quote(TEXT)}")
        wait_for_drawn(page, ["masks_gallery_causal_mask"])
        meta, m = drawn_panels(page, "masks_gallery_causal_mask")
        assert meta["kind"] == "mask" and meta["bytes_per_cell"] == 0  # bits, unpacked by the browser
        n = len(m[0])  # causal: exactly the keys after each query are −∞, the rest 0
        masked = np.triu(np.ones((n, n), dtype=bool), 1)
        np.testing.assert_array_equal(m[0], np.where(masked, -np.inf, 0.0))
        # M holds only 0 and −∞: two colours (green = may attend, grey = −∞), never a −1..1 colour bar
        pixels = drawn_pixels(page, "masks_gallery_causal_mask", 0)
        assert (pixels[masked][:, :3] == GREY).all() and (pixels[~masked][:, :3] == MAY_ATTEND).all()
        # the card's M and its weights are one component (heatmap_row): the two halves of one row, M on the left
        wait_for_drawn(page, ["masks_gallery_causal_weights"])  # measured once both halves are laid out
        row = page.locator(".avhm-many").filter(has=page.locator('.avhm[data-name="masks_gallery_causal_mask"]'))
        halves = row.locator(":scope > .avhm-slot > .avhm")
        assert [halves.nth(i).get_attribute("data-name") for i in range(halves.count())] == [
            "masks_gallery_causal_mask", "masks_gallery_causal_weights"]
        left, right = halves.nth(0).bounding_box(), halves.nth(1).bounding_box()
        assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 1
        _, w = drawn_panels(page, "masks_gallery_causal_weights")
        np.testing.assert_allclose(w[0], toy.run(TEXT, mask="causal").attentions[0, 0].numpy(), atol=1e-4)
        assert not exceptions_on(page)


def test_hover_names_query_key_and_the_weight_to_three_decimals(server, toy):
    with chromium_page() as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}")
        at = cell_on_screen(page, "grid", 1, 3, 2)
        page.mouse.move(at["x"], at["y"])
        tip = page.locator(".avhm-tip").first  # Playwright's CSS pierces the component's shadow root
        tip.wait_for(state="visible", timeout=10_000)
        res = toy.run(TEXT)
        text = tip.inner_text()
        assert f"query 3: {res.labels[3]}" in text and f"key 2: {res.labels[2]}" in text
        assert f"weight: {float(res.attentions[0, 1, 3, 2]):.3f}" in text


def test_a_tap_on_a_phone_shows_the_cells_values_as_a_hover_does(server, toy):
    """The pages say "hover or tap a cell": on a touch screen, with no mouse to hover, a tap shows the same words."""
    with people_browser() as browser:
        page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True).new_page()
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}")
        at = cell_on_screen(page, "grid", 1, 3, 2)
        page.touchscreen.tap(at["x"], at["y"])
        tip = page.locator(".avhm-tip").first
        tip.wait_for(state="visible", timeout=10_000)
        res = toy.run(TEXT)
        text = tip.inner_text()
        assert f"query 3: {res.labels[3]}" in text and f"key 2: {res.labels[2]}" in text
        assert f"weight: {float(res.attentions[0, 1, 3, 2]):.3f}" in text


def test_a_click_shows_that_cells_arithmetic_as_attnviz_computes_it(server, toy):
    with chromium_page(width=1920, height=1080) as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}&layer=1")
        click_cell(page, panel=1, row=4, col=2)
        shown = in_short(page)
        pair = pair_detail(head_steps(toy, toy.run(TEXT, keep=True), 1, 1), 4, 2)
        assert (shown["dot"], shown["scaled"], shown["weight"]) == (plain(pair.dot), plain(pair.scaled), plain(pair.weight))
        assert page.evaluate("() => window.attnvizHeatmaps.grid.selection()") == {"panel": 1, "row": 4, "col": 2}
        assert "sbs_head=1" in page.url and "sbs_query=4" in page.url and "sbs_key=2" in page.url
        # the enlarged head is clickable too: its cell becomes the selection
        page.get_by_text("Head to enlarge").wait_for()
        click_cell(page, panel=0, row=1, col=0, key="focus_head")
        again = in_short(page, previous=shown["text"])
        pair = pair_detail(head_steps(toy, toy.run(TEXT, keep=True), 1, 0), 1, 0)
        assert again["weight"] == plain(pair.weight)
        assert not exceptions_on(page)
        # the selection lives in the URL with Step by step's own keys: its link opens that page on the same pair
        page.get_by_text("Follow this pair step by step").click()
        page.get_by_text("One query, one key").wait_for(timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        tex = page.evaluate("() => [...document.querySelectorAll('annotation')].map(e => e.textContent).join('\\n')")
        labels = toy.run(TEXT).labels
        assert rf"q_{{1}}\ \text{{{labels[1]}}}" in tex and rf"k_{{0}}\ \text{{{labels[0]}}}" in tex  # its q_i and k_j
        assert "sbs_query=1%3A" in page.url and "sbs_key=0%3A" in page.url  # the pickers accepted the link's values
        assert not exceptions_on(page)


def test_back_from_the_followed_pair_returns_to_the_explorer_as_it_was(server, toy):
    """Follow this pair, then the browser's Back: the explorer at the layer and on the cell it showed, its numbers
    that layer's. It was Step by step again, its address without the layer, drawing layer 0: the switch had left
    two entries in the history (the pair's address on the explorer's path, then the Step by step one the server
    completed with the layer)."""
    with chromium_page(width=1366, height=768) as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}&layer=1")
        click_cell(page, panel=1, row=4, col=2)
        shown = in_short(page)
        wait_for_app_idle(page)
        page.get_by_text("Follow this pair step by step").click()
        page.get_by_text("One query, one key").wait_for(timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert "layer=1" in page.url and "/step_by_step" in page.url, page.url
        page.go_back()
        page.wait_for_function("() => location.pathname === '/'", timeout=30_000, polling=100)
        wait_for_drawn(page, ["grid"])
        assert "layer=1" in page.url and "sbs_query=4" in page.url and "sbs_key=2" in page.url, page.url
        again = in_short(page)
        assert again["text"] == shown["text"]
        pair = pair_detail(head_steps(toy, toy.run(TEXT, keep=True), 1, 1), 4, 2)
        assert (again["dot"], again["weight"]) == (plain(pair.dot), plain(pair.weight))
        assert page.locator(".st-key-layer").get_by_role("combobox").input_value() == "1"
        _, drawn = drawn_panels(page)
        np.testing.assert_allclose(drawn, toy.run(TEXT).attentions[1].numpy(), atol=1e-5)
        assert page.evaluate("() => window.attnvizHeatmaps.grid.selection()") == {"panel": 1, "row": 4, "col": 2}
        page.screenshot(path=str(ARTIFACTS / "explorer_back_from_the_pair.png"))
        assert not exceptions_on(page)


def test_a_forbidden_cell_says_minus_infinity_and_a_click_between_panels_selects_nothing(server, toy):
    with chromium_page(width=1920, height=1080) as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}&mask=causal")
        gap = page.evaluate("""() => { const h = window.attnvizHeatmaps.grid;
                                  const a = h.cellCenter(0, 0, 6), b = h.cellCenter(1, 0, 0);
                                  return {x: (a.x + b.x) / 2, y: a.y}; }""")  # between head 0's last column and head 1
        page.mouse.click(gap["x"], gap["y"])
        page.wait_for_timeout(800)
        assert page.evaluate("() => window.attnvizHeatmaps.grid.selection()") is None
        click_cell(page, panel=0, row=1, col=5)  # query 1 may not look at key 5 under a causal mask
        shown = in_short(page)
        assert shown["masked"] == "−∞" and shown["weight"] == plain(0.0)
        assert page.get_by_text("The mask forbids this pair").count() == 1
        assert not exceptions_on(page)


def test_png_download_is_a_png(server):
    with chromium_page() as page:
        open_explorer(page, server, f"model=toy&text={quote(TEXT)}")
        with page.expect_download(timeout=20_000) as download:
            page.locator(".avhm-png").first.click()
        path = download.value.path()
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and download.value.suggested_filename.endswith(".png")
        assert download.value.suggested_filename.startswith("layer_0_"), download.value.suggested_filename  # the grid's
        (ARTIFACTS / "heatmap_grid_download.png").write_bytes(Path(path).read_bytes())  # its caption, to look at


WIDER_THAN_COLUMN = """() => {
  const bad = [];
  const columns = '[data-testid="stColumn"], [data-testid="stMain"] [data-testid="stVerticalBlock"]';
  for (const col of document.querySelectorAll(columns)) {
    const limit = col.getBoundingClientRect().right + 1;
    for (const el of col.querySelectorAll('[data-testid="stElementContainer"], .stBidiComponent'))
      if (el.getBoundingClientRect().right > limit) bad.push((el.className || el.tagName).toString().slice(0, 60));
  }
  for (const b of document.querySelectorAll('.stBidiComponent')) {  // the canvas itself, inside the shadow root
    const host = b.querySelector('[data-testid="stBidiComponentIsolated"]');
    const canvas = host && host.shadowRoot && host.shadowRoot.querySelector('canvas.avhm-canvas');
    if (canvas && canvas.getBoundingClientRect().right > b.getBoundingClientRect().right + 1) bad.push('canvas');
  }
  for (const d of document.querySelectorAll('.katex-display')) {  // a formula's content, not KaTeX's capped box
    const box = d.closest('[data-testid="stElementContainer"]');
    if (box && d.offsetParent !== null && d.scrollWidth > box.clientWidth + 1)
      bad.push(`formula ${d.scrollWidth} px in ${box.clientWidth} px: ${d.textContent.slice(0, 40)}`);
  }
  return bad;
}"""


@pytest.mark.parametrize("width, height", [(1024, 768), (1920, 1080)])
def test_explorer_fits_its_columns_screenshots(server, width, height):
    with chromium_page(width=width, height=height) as page:
        open_explorer(page, server, f"text={quote('The cat sat on the mat because it was tired.')}")
        click_cell(page, panel=4, row=5, col=2)
        in_short(page)
        wait_for_app_idle(page)
        page.evaluate("() => window.attnvizHeatmaps.grid.reveal(4, 5, 2)")
        page.screenshot(path=str(ARTIFACTS / f"heatmap_explorer_{width}x{height}.png"))
        page.set_viewport_size({"width": width, "height": 3200})
        page.wait_for_timeout(800)
        page.screenshot(path=str(ARTIFACTS / f"heatmap_explorer_{width}_full.png"))
        assert page.evaluate(WIDER_THAN_COLUMN) == []
        assert not exceptions_on(page)
        # a head's title that does not fit its panel loses its trailing " · " parts and says so with "…"; the tooltip
        # keeps it whole. At 1920 px every title fits.
        titles = page.evaluate("() => window.attnvizHeatmaps.grid.titles()")
        assert len(titles) == 12 and all(t["full"].startswith("head ") and " · H " in t["full"] for t in titles)
        for t in titles:
            assert t["shown"] == t["full"] or (t["shown"].endswith(" …") and t["full"].startswith(t["shown"][:-2]))
        if width >= 1920:
            assert all(t["shown"] == t["full"] for t in titles)
