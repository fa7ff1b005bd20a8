"""Find the head and Query–key space in a real headless Chromium: what is drawn holds attnviz's numbers, the hover
of the layers × heads map names layer and head, "Open in the explorer" opens that head on the pair, and a click
on a point of the query–key plane highlights its row. Screenshots at 1024×768 (?present=1) and 1920×1080 in
test-artifacts/ (find_head_*.png, qk_space_*.png)."""

import os
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle, wait_for_drawn, wait_for_text

ARTIFACTS = ROOT / "test-artifacts"
TEXT = "The animal didn't cross the street because it was too tired."
IT, ANIMAL = 10, 2
SIZES = [(1024, 768, "&present=1"), (1920, 1080, "")]
pytestmark = pytest.mark.browser
MAIN = '[data-testid="stMain"]'


def drawn_values(page, key: str) -> np.ndarray:
    return np.array(page.evaluate(f"() => window.attnvizHeatmaps['{key}'].values(0)"), dtype=np.float64)


# JS: does the page scroll sideways; which texts of the page itself (not the closed sidebar's, nor the shared
# presenter row's) reach past their box
OVERFLOW = """() => {
  const wide = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')]
    .filter(e => e.offsetParent !== null && !e.closest('.st-key-presenter_controls')  // its mask button ends in … by design
                 && e.scrollWidth > e.clientWidth + 1)
    .map(e => `${(e.innerText || '').slice(0, 50)} (${e.scrollWidth} > ${e.clientWidth} px)`);
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, wide};
}"""


def assert_fits(page) -> None:
    """Nothing scrolls sideways and no text of the page reaches past its column."""
    found = page.evaluate(OVERFLOW)
    assert found["scroll"] <= found["inner"] and not found["wide"], found


def full_page_shot(page, path) -> None:
    """The whole page: Streamlit scrolls its main block, not the document, so the viewport is made as tall."""
    height = page.evaluate(f"() => document.querySelector('{MAIN}').scrollHeight")
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(max(height, size["height"]), 6000)})
    page.wait_for_timeout(800)
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


@pytest.mark.parametrize("width,height,present", SIZES, ids=["1024x768-present", "1920x1080"])
def test_find_the_head_draws_attnvizs_weights_and_opens_the_explorer(server, minilm, width, height, present):
    res = minilm.run(TEXT)
    with chromium_page(width=width, height=height) as page:
        page.goto(f"{server}/find_head?text={quote(TEXT)}&fh_query=it&fh_key=animal{present}")
        wait_for_drawn(page, ["fh_map", "fh_head_1", "fh_head_2", "fh_head_3"])
        wait_for_app_idle(page)
        np.testing.assert_allclose(drawn_values(page, "fh_map"), res.attentions[:, :, IT, ANIMAL].numpy(), atol=1e-4)
        np.testing.assert_allclose(drawn_values(page, "fh_head_1"), res.attentions[3, 1].numpy(), atol=1e-4)
        assert page.evaluate("() => window.attnvizHeatmaps.fh_head_1.selection()") == {"panel": 0, "row": IT, "col": ANIMAL}
        assert "fh_query=10" in page.url and "fh_key=2" in page.url  # the link's token texts came back as positions
        text = page.inner_text(MAIN)
        assert "Layer 3, head 1 gives the most: 0.68 of query it (10)'s attention goes to key animal (2)" in text
        # the map is on the first screen, and its labels are readable on a projector
        box = page.evaluate("() => window.attnvizHeatmaps.fh_map.cellCenter(0, 5, 11)")
        assert box["y"] < height, box
        page.screenshot(path=str(ARTIFACTS / f"find_head_{width}x{height}.png"))
        assert_fits(page)
        # the hover of the layers × heads map says layer and head, not query and key
        at = page.evaluate("() => window.attnvizHeatmaps.fh_map.cellCenter(0, 3, 1)")
        page.mouse.move(at["x"], at["y"])
        tip = page.locator(".avhm-tip").first
        tip.wait_for(state="visible", timeout=10_000)
        hover = tip.inner_text()
        assert "layer 3" in hover and "head 1" in hover and "query" not in hover.split("\n", 1)[1]
        assert f"weight: {float(res.attentions[3, 1, IT, ANIMAL]):.3f}" in hover
        full_page_shot(page, ARTIFACTS / f"find_head_{width}x{height}_full.png")
        assert not exceptions_on(page)

        page.get_by_role("button", name="Open in the explorer").first.click()
        wait_for_text(page, "Layer 3, head 1: query 10 “it” → key 2 “animal”")
        wait_for_app_idle(page)
        assert "layer=3" in page.url and "sbs_head=1" in page.url, page.url
        assert ("present=1" in page.url) == bool(present)
        np.testing.assert_allclose(drawn_values(page, "grid"), res.attentions[3, 1].numpy(), atol=1e-4)
        assert page.evaluate("() => window.attnvizHeatmaps.grid.selection()") == {"panel": 0, "row": IT, "col": ANIMAL}
        page.screenshot(path=str(ARTIFACTS / f"find_head_opened_in_explorer_{width}x{height}.png"))
        assert not exceptions_on(page)


def plotted_point(page, trace: int, index: int) -> dict:
    """A point of the plotly scatter in screen coordinates (plotly's own axes map data to pixels)."""
    return page.evaluate("""([t, i]) => { const gd = document.querySelector('.js-plotly-plot');
        const d = gd._fullData[t], L = gd._fullLayout, box = gd.getBoundingClientRect();
        return {x: box.left + L._size.l + L.xaxis.l2p(d.x[i]), y: box.top + L._size.t + L.yaxis.l2p(d.y[i])}; }""",
                         [trace, index])


def red_lines(page) -> int:
    """How many lines the scatter draws in the highlight's red (the highlighted query's row)."""
    return page.evaluate("""() => (document.querySelector('.js-plotly-plot')._fullLayout.shapes || [])
                                  .filter(s => !s.line.color.startsWith('rgba')).length""")


@pytest.mark.parametrize("width,height,present", SIZES, ids=["1024x768-present", "1920x1080"])
def test_query_key_space_and_a_click_on_a_point_highlights_its_row(server, minilm, width, height, present):
    res = minilm.run(TEXT)
    with chromium_page(width=width, height=height) as page:
        page.goto(f"{server}/qk_space?text={quote(TEXT)}&layer=3&qk_head=1{present}")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        wait_for_text(page, "Click a query or key point")
        wait_for_app_idle(page)
        page.wait_for_timeout(500)
        title = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullLayout.title.text")
        assert "PCA of [Q; K] for layer 3 head 1<br>(explains " in title
        page.screenshot(path=str(ARTIFACTS / f"qk_space_{width}x{height}.png"))

        at = plotted_point(page, 0, IT)  # the query point of 'it'
        page.mouse.move(at["x"], at["y"])
        hover = page.locator(".hoverlayer .hovertext").first
        hover.wait_for(state="visible", timeout=10_000)
        assert "query it (10)" in hover.text_content()
        page.mouse.click(at["x"], at["y"])
        wait_for_text(page, "Row of query it (10)")
        wait_for_app_idle(page)
        page.wait_for_timeout(500)
        assert "qk_row=10" in page.url, page.url
        assert red_lines(page) == int((res.attentions[3, 1, IT] >= 0.02).sum())  # the row's lines, in red
        page.screenshot(path=str(ARTIFACTS / f"qk_space_row_{width}x{height}.png"))
        assert_fits(page)
        full_page_shot(page, ARTIFACTS / f"qk_space_row_{width}x{height}_full.png")
        assert not exceptions_on(page)

        # a second click right after, on another point (the key of 'animal'): its query row follows
        at = plotted_point(page, 1, ANIMAL)
        page.mouse.click(at["x"], at["y"])
        wait_for_text(page, "Row of query animal (2)")
        wait_for_app_idle(page)
        assert "qk_row=2" in page.url
        assert not exceptions_on(page)


def pick(page, key: str, option: str) -> None:
    """Choose an option of the selectbox under this widget key, as a person does: open it, click the option."""
    picker = page.locator(f".st-key-{key}").get_by_role("combobox")
    picker.click()
    picker.press("ArrowDown")  # opens its list (a click alone only focuses it in headless Chromium)
    page.get_by_role("option", name=option, exact=True).click()


def test_back_after_a_pick_reopens_the_token_the_earlier_address_names(server):
    """A picked token is written into the address (fh_query=9); the browser's Back reopens the address before it
    (fh_query=10), and the page shows that token again. Its run carries a position the page wrote itself before,
    which on any other run is a late echo to ignore (ui.token_link._written_before): on Back it is what is asked."""
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/find_head?text={quote(TEXT)}&fh_query=10&fh_key=2")
        wait_for_drawn(page, ["fh_map"])
        wait_for_app_idle(page)
        pick(page, "fh_query", "because (9)")
        wait_for_text(page, "of query because (9)'s attention goes to key animal (2)")
        page.wait_for_function("() => location.search.includes('fh_query=9')", timeout=30_000, polling=100)
        page.go_back()
        wait_for_text(page, "of query it (10)'s attention goes to key animal (2)")
        wait_for_app_idle(page)
        assert "fh_query=10" in page.url
        assert not exceptions_on(page)


def test_two_quick_changes_end_on_a_page_that_matches_both(server, minilm):
    """A lecturer picks a new query and, without waiting, a new key; then a head and a row on the plane."""
    res = minilm.run(TEXT)
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/find_head?text={quote(TEXT)}&fh_query=10&fh_key=2&present=1")
        wait_for_drawn(page, ["fh_map"])
        wait_for_app_idle(page)
        pick(page, "fh_query", "because (9)")
        pick(page, "fh_key", "street (8)")
        wait_for_text(page, "of query because (9)'s attention goes to key street (8)")
        wait_for_app_idle(page)
        page.wait_for_timeout(500)
        np.testing.assert_allclose(drawn_values(page, "fh_map"), res.attentions[:, :, 9, 8].numpy(), atol=1e-4)
        assert "fh_query=9" in page.url and "fh_key=8" in page.url
        best = divmod(int(res.attentions[:, :, 9, 8].flatten().argmax()), 12)
        np.testing.assert_allclose(drawn_values(page, "fh_head_1"), res.attentions[best].numpy(), atol=1e-4)
        assert not exceptions_on(page)

        page.goto(f"{server}/qk_space?text={quote(TEXT)}&layer=3&qk_head=1&present=1")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        wait_for_app_idle(page)
        pick(page, "qk_head", "5")
        pick(page, "qk_row", "street (8)")
        wait_for_text(page, "Row of query street (8), layer 3 head 5")
        wait_for_app_idle(page)
        page.wait_for_timeout(500)
        title = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullLayout.title.text")
        assert "for layer 3 head 5<br>" in title and "qk_head=5" in page.url and "qk_row=8" in page.url
        assert red_lines(page) == int((res.attentions[3, 5, 8] >= 0.02).sum())  # the row's lines, of head 5
        page.screenshot(path=str(ARTIFACTS / "qk_space_quick_changes_1024x768.png"))
        assert not exceptions_on(page)
