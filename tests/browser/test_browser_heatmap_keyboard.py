"""The heatmaps by keyboard and screen reader, in a real Chromium (attnviz/components/heatmap/access.js, table.js):
the explorer with no mouse (Tab to the grid, the cursor to query "it" -> key "animal", Enter: that cell's arithmetic,
then Tab leaves), and what a screen reader is handed for each cell, the heatmap and its table view, against the
engine's numbers. The notebook widget and saved HTML files are walked by keyboard in test_browser_widget.py and
test_browser_saved_html.py."""

import contextlib
import os
import re
from pathlib import Path
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import chromium_page, exceptions_on, wait_for_app_idle, wait_for_drawn
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attnviz.lessons.step_by_step.steps import head_steps, pair_detail

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SENTENCE = "The animal did not cross the street because it was too tired."
pytestmark = pytest.mark.browser

# the heatmap that holds the keyboard's focus (through the component's shadow root), by its name, or None
FOCUSED_HEATMAP = """() => { let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a && a.classList.contains('avhm-wrap') ? a.closest('.avhm').dataset.name : null; }"""


def tab_to(page, name: str, most: int = 300) -> int:
    """Press Tab until the heatmap `name` has the focus; -> how many presses it took."""
    for presses in range(1, most + 1):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED_HEATMAP) == name:
            return presses
    raise AssertionError(f"{most} presses of Tab never reached the heatmap {name!r}")


def reading(page, name: str) -> dict:
    """What a screen reader is handed: the grid's name, its keys' description, the active cell's text."""
    return page.evaluate(f"() => window.attnvizHeatmaps['{name}'].reading()")


# JS: the grid's first cell's centre on screen, the bottom of the app's sticky header (over the page's top 60 px),
# and whether the cell shows between the header and the screen's bottom edge
FIRST_CELL_SHOWS = """(screen) => { const header = document.querySelector('[data-testid="stHeader"]')
  .getBoundingClientRect().bottom; const y = window.attnvizHeatmaps.grid.cellCenter(0, 0, 0).y;
  return {y, header, shows: header + 4 < y && y < screen}; }"""


def weight_in(sentence: str) -> float:
    return float(re.search(r": weight (−?\d+\.\d+)", sentence).group(1).replace("−", "-"))


def test_the_explorer_with_no_mouse_reaches_a_head_moves_to_it_animal_and_opens_its_arithmetic(server, minilm):
    """Tab reaches the grid; PageDown moves to head 1, the arrows to query 'it', key 'animal'; each cell is read as
    the engine's weight; Enter opens the arithmetic of that cell, as a click does; Tab then leaves the grid."""
    res = minilm.run(SENTENCE)
    i, j = res.labels.index("it"), res.labels.index("animal")
    with chromium_page(1366, 768) as page:  # a laptop's screen: Tab scrolls the grid to the top, by the header
        page.goto(f"{server}/?text={quote(SENTENCE)}&layer=3")
        wait_for_drawn(page, ["grid", "focus_head"])
        tab_to(page, "grid")
        start = reading(page, "grid")
        assert start["name"].startswith("layer 3: 12 heads, weights after softmax: 12 panels of 15 × 15 weights.")
        assert "Enter shows the cell's arithmetic" in start["description"]
        first = float(res.attentions[3, 0, 0, 0])
        # the cursor's cell shows, below the header, not under it (the scroll is smooth: a moment, longer under load)
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function(f"(screen) => ({FIRST_CELL_SHOWS})(screen).shows", arg=768, timeout=5_000,
                                   polling=100)
        seen = page.evaluate(FIRST_CELL_SHOWS, 768)
        assert seen["shows"], seen
        assert start["active"] == f"query 0 '[CLS]', key 0 '[CLS]': weight {first:.3f} (layer 3, head 0)"
        page.keyboard.press("PageDown")  # the same cell of the next head
        for _ in range(i):
            page.keyboard.press("ArrowDown")
        for _ in range(j):
            page.keyboard.press("ArrowRight")
        heard = reading(page, "grid")["active"]
        weight = float(res.attentions[3, 1, i, j])
        assert heard == f"query {i} 'it', key {j} 'animal': weight {weight:.3f} (layer 3, head 1)"
        assert page.evaluate("() => window.attnvizHeatmaps.grid.cursor()") == {"panel": 1, "row": i, "col": j}
        page.screenshot(path=str(ARTIFACTS / "heatmap_keyboard_cursor.png"))

        page.keyboard.press("Enter")
        shown = page.wait_for_function(
            """() => { const p = [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
                 .find(e => e.textContent.startsWith('In short')); return p ? p.textContent : null; }""",
            timeout=60_000, polling=100).json_value()
        wait_for_app_idle(page)
        pair = pair_detail(head_steps(minilm, minilm.run(SENTENCE, keep=True), 3, 1), i, j)
        assert f"weight {pair.weight:.4f}" in shown.replace("−", "-")  # the arithmetic of that very cell
        heading = page.locator('[data-testid="stMarkdownContainer"] strong', has_text="Layer 3, head 1:").first
        assert heading.inner_text() == f"Layer 3, head 1: query {i} “it” → key {j} “animal”"
        # as a click does: the same ring, the same selection in the URL
        assert page.evaluate("() => window.attnvizHeatmaps.grid.selection()") == {"panel": 1, "row": i, "col": j}
        assert f"sbs_query={i}" in page.url and f"sbs_key={j}" in page.url and "sbs_head=1" in page.url
        assert page.evaluate(FOCUSED_HEATMAP) == "grid"  # the focus stays where it was
        page.screenshot(path=str(ARTIFACTS / "heatmap_keyboard_enter.png"))

        page.keyboard.press("Tab")  # no trap: Tab goes on past the grid
        assert page.evaluate(FOCUSED_HEATMAP) is None
        page.keyboard.press("Shift+Tab")
        assert page.evaluate(FOCUSED_HEATMAP) == "grid" and reading(page, "grid")["active"] == heard
        assert not exceptions_on(page)


def test_every_cell_the_heatmap_and_its_table_view_read_the_engines_numbers(server, toy):
    """For every cell of every head, the sentence a screen reader hears names its tokens, the engine's weight (as
    drawn: to 3 decimals) and its layer and head; the grid's name has the three largest weights; the table view,
    opened by keyboard, lists each query's three largest keys in the engine's order."""
    text = "red green blue red green"
    res = toy.run(text, mask="causal")
    labels, layer = res.labels, 1
    with chromium_page() as page:
        page.goto(f"{server}/?model=toy&text={quote(text)}&mask=causal&layer={layer}")
        wait_for_drawn(page, ["grid", "focus_head"])
        heads, n = res.attentions.shape[1], len(labels)
        said = page.evaluate(f"""() => {{ const h = window.attnvizHeatmaps.grid, out = [];
          for (let p = 0; p < {heads}; p++) for (let r = 0; r < {n}; r++) for (let c = 0; c < {n}; c++)
            out.push(h.sentence(p, r, c));
          return out; }}""")
        w = res.attentions[layer].numpy()  # (heads, n, n)
        for k, sentence in enumerate(said):
            p, r, c = np.unravel_index(k, (heads, n, n))
            assert sentence.startswith(f"query {r} '{labels[r]}', key {c} '{labels[c]}': weight ")
            assert sentence.endswith(f" (layer {layer}, head {p})")
            assert abs(weight_in(sentence) - w[p, r, c]) <= 0.0005 + 1e-5, sentence
        masked = said[np.ravel_multi_index((0, 0, n - 1), (heads, n, n))]
        assert weight_in(masked) == 0.0  # causal: query 0 may not look at the last key, and the grid says 0.000
        # the enlarged head (one panel) reads its layer and head from its title, "layer 1, head 0: weights ..."
        assert page.evaluate("() => window.attnvizHeatmaps.focus_head.sentence(0, 2, 1)").endswith(f" (layer {layer}, head 0)")

        tab_to(page, "grid")
        name = reading(page, "grid")["name"]
        largest = re.findall(r"(\d\.\d{3}) at query (\d+) '[^']*', key (\d+) '[^']*' \(layer 1, head (\d+)\)", name)
        top = np.sort(w.ravel())[::-1][:3]  # the engine's three largest weights (ties, such as 1 and 1, in any order)
        assert len(largest) == 3 and np.allclose([float(v) for v, *_ in largest], top, atol=0.0005 + 1e-5), name
        for v, r, c, p in largest:  # each named cell holds the weight said
            assert abs(w[int(p), int(r), int(c)] - float(v)) <= 0.0005 + 1e-5

        # the table view, opened from the keyboard: Tab past Download PNG to its summary, Enter
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        table = page.locator('.avhm[data-name="grid"] .avhm-table table').first
        table.wait_for()
        assert table.locator("caption").inner_text().startswith("head 0 ·")
        rows = table.locator("tbody tr")
        assert rows.count() == n
        for r in range(n):
            cells = rows.nth(r).locator("th, td").all_inner_texts()
            assert cells[0] == f"{r} '{labels[r]}'"
            keys = [int(re.match(r"(\d+) '", cell).group(1)) for cell in cells[1:] if cell]
            assert len(keys) == min(3, r + 1)  # causal: a weight of 0 (a masked key) is not listed
            assert np.allclose(w[0, r, keys], np.sort(w[0, r])[::-1][:len(keys)], atol=1e-4)  # the largest, in order
        page.locator('.avhm[data-name="grid"] .avhm-table').screenshot(path=str(ARTIFACTS / "heatmap_table_view.png"))
        assert not exceptions_on(page)
