"""Projector-ready, in a real headless Chromium: presentation mode's metric values, a legend clear of its chart's axis
title, and the numbers printed in heatmap cells at a projector's size (and where the default lecture's step 7 says
they are). That every page fits 1024×768 and 1920×1080 (no horizontal overflow, no LaTeX block wider
than its column) is checked by the one walk over every page (tests/browser/test_browser.py), which keeps its pictures
in test-artifacts/projector_<page>_<w>x<h>.png.
"""

import os
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import app_menu
from browser_helpers import chromium_page, exceptions_on, wait_until_settled

from attnviz.lecture import load_plan, step_link
from attnviz.paths import LECTURES

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.browser


def settle(page) -> None:
    """Wait until the page's runs are over and it has stayed quiet for 1.5 s: a first visit connects, then starts the
    run, then loads the model, and KaTeX and the charts draw after the run ends (one idle check can come too early).
    It waited 4 s for a run to start, which had often ended already, then 1 s, then 1 s more: 6 s a page."""
    wait_until_settled(page, quiet_ms=1_500)


METRIC_VALUE_PX = """() => parseFloat(getComputedStyle(document.querySelector(
  '[data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p')).fontSize)"""


# each plotly chart whose legend's box meets its x-axis title's: [the title, the two boxes' overlap in px]
LEGEND_ON_AXIS_TITLE = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(p => {
  const title = p.querySelector('.xtitle'), legend = p.querySelector('.legend .bg');
  if (!title || !legend) return [];
  const a = title.getBoundingClientRect(), b = legend.getBoundingClientRect();
  const over = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  const across = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  return over > 0 && across > 0 ? [[title.textContent, Math.round(over)]] : []; })"""


def test_presentation_mode_makes_metric_values_larger_not_smaller(server):
    """Presentation mode enlarges paragraphs; a metric's value is a paragraph too, and must not shrink to body size.
    Its larger type leaves a legend under a chart clear of the x axis's title (the Scaling lab's "d_k" sat on the
    legend's first row, "theory: d_k")."""
    with chromium_page(width=1280, height=720) as page:
        sizes = {}
        for query in ("", "?present=1"):
            page.goto(f"{server}/scaling_lab{query}")
            page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
            settle(page)
            sizes[query] = page.evaluate(METRIC_VALUE_PX)
            assert not page.evaluate(LEGEND_ON_AXIS_TITLE), query
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


def test_step_7s_notes_say_where_the_numbers_are_printed(server):
    """The default lecture's step 7 (one head by hand, the toy model) said "every number fits inside its cell"; on a
    1024×768 projector no matrix of its chain printed one. Its notes now say what each screen does, checked here: the
    projector prints none and says to hover, a phone (a student's, following) prints every one."""
    plan = load_plan(LECTURES / "attention.toml", {path: title for _, path, title in app_menu()})
    number, step = next((k, s) for k, s in enumerate(plan.steps, 1) if s.page == "step_by_step")
    notes = " ".join(step.notes.split())
    assert "A student's phone or laptop prints every number in its cell" in notes
    assert "on a 1024 × 768 projector the cells are too small for numbers the back row can read" in notes
    for width, height, present in ((1024, 768, True), (390, 844, False)):
        with chromium_page(width=width, height=height) as page:
            page.goto(f"{server}/{step_link(step, lecture='attention', number=number, present=present)[2:]}")
            page.wait_for_function(f"() => ({PRINTED})().length >= 11", timeout=120_000, polling=200)
            settle(page)
            printed = [p for p in page.evaluate(PRINTED) if p[0].startswith("sbs_fig_")]  # the chain's matrices
            assert len(printed) >= 11, printed
            if present:
                assert all(px == 0 and "hover a cell for its value" in note for _, px, note, _ in printed), printed
            else:
                assert all(px > 0 for _, px, _, _ in printed), printed
            assert not exceptions_on(page)
