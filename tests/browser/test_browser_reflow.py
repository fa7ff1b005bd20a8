"""Zoom and reflow (WCAG 1.4.4, 1.4.10) in a real Chromium, on a representative set of pages: at 200 % zoom of a
1366×768 screen (a 683×384 CSS viewport, what the browser lays out when the reader zooms) and at 320 px wide (400 % of
1280), nothing is cut off, nothing overlaps, and the page never scrolls sideways; only what needs two dimensions to be
read (heatmaps, plots, tables, formulas, the Transformer map) may scroll inside its own box, and no column of words
does. With "reduce motion", no
animation or transition runs. Screenshots, the whole page at each size: test-artifacts/reflow_<page>_<w>x<h>.png."""

from __future__ import annotations

import pytest
from browser_helpers import ROOT, chromium_page, resized, through_the_menu, wait_until_settled

ARTIFACTS = ROOT / "test-artifacts"
# a page of each kind: heatmaps and the sidebar's controls, a chain of figures, an SVG of links, cards with tables and
# a page link, sliders and charts, the lecturer's page (buttons, a table, a file upload)
PAGES = ["", "step_by_step", "transformer_map", "masks_lab", "scaling_lab", "lecture"]
SIZES = [(683, 384), (320, 640)]
pytestmark = pytest.mark.browser

# JS: what does not reflow. Words cut by their box (text that needs more room than it has and is clipped), an element
# wider than the page's main column, the page or its main column scrolling sideways, and blocks of a column that
# overlap. What needs two dimensions is exempt (WCAG 1.4.10): heatmaps, plotly charts, tables, formulas, the map.
REFLOW = """() => {
  const two_d = '[data-testid="stBidiComponentIsolated"], .js-plotly-plot, [data-testid="stDataFrame"], .katex-display,'
    + ' .av-map-scroll, .av-tmap svg, [data-testid="stCode"] pre';
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden' && !e.closest(two_d)
    && !e.closest('[data-testid="stSidebar"][data-collapsed="true"]');
  const text = (e) => (e.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 50);
  const out = [];
  const doc = document.documentElement, main = document.querySelector('[data-testid="stMain"]');
  if (doc.scrollWidth > doc.clientWidth + 1) out.push(`the page scrolls sideways (${doc.scrollWidth} > ${doc.clientWidth})`);
  if (main.scrollWidth > main.clientWidth + 1)
    out.push(`the main column scrolls sideways (${main.scrollWidth} > ${main.clientWidth})`);
  for (const e of document.querySelectorAll('[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,'
      + ' [data-testid="stWidgetLabel"] p, button p, a p, [data-testid="stCaptionContainer"], [data-testid="stHeading"] h1,'
      + ' [data-testid="stHeading"] h2, [data-testid="stHeading"] h3, .attnviz-lecture-bar span, .attnviz-lecture-bar a')) {
    if (shown(e) && e.clientWidth && e.scrollWidth > e.clientWidth + 1)
      out.push(`cut: "${text(e)}" needs ${e.scrollWidth} px, has ${e.clientWidth}`);
  }
  for (const e of main.querySelectorAll('[data-testid="stVerticalBlock"], [data-testid="stMarkdownContainer"]')) {
    const y = getComputedStyle(e).overflowY;  // words in a box of their own that scrolls: read through a slot
    if (shown(e) && (y === 'auto' || y === 'scroll') && e.scrollHeight > e.clientHeight + 1)
      out.push(`scrolls inside its own box: "${text(e)}" is ${e.scrollHeight} px tall in ${e.clientHeight}`);
  }
  const right = main.getBoundingClientRect().right;
  for (const e of main.querySelectorAll('[data-testid="stElementContainer"]')) {
    const r = e.getBoundingClientRect();
    if (shown(e) && r.width && r.right > right + 1)
      out.push(`past the column's edge: "${text(e)}" to ${Math.round(r.right)} px of ${Math.round(right)}`);
  }
  for (const block of main.querySelectorAll('[data-testid="stVerticalBlock"]')) {  // one above the next
    const kids = [...block.children].filter(k => shown(k) && k.getBoundingClientRect().height > 0
      && getComputedStyle(k).position !== 'absolute' && getComputedStyle(k).position !== 'fixed');
    for (let i = 1; i < kids.length; i++) {
      const a = kids[i - 1].getBoundingClientRect(), b = kids[i].getBoundingClientRect();
      if (b.top < a.bottom - 1 && b.left < a.right - 1 && a.left < b.right - 1)
        out.push(`overlap: "${text(kids[i])}" starts ${Math.round(a.bottom - b.top)} px inside "${text(kids[i - 1])}"`);
    }
  }
  return out;
}"""


# JS: the layout has come to rest after a resize: the page's and its main column's widths the same for 500 ms (plotly
# charts lay themselves out again a moment after the window's resize, longer on a busy machine)
AT_REST = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const look = [document.documentElement.scrollWidth, main.scrollWidth, main.scrollHeight].join(' ');
  const now = performance.now();
  if (look !== window.__layoutLook) { window.__layoutLook = look; window.__layoutSince = now; return false; }
  return now - window.__layoutSince >= 500;
}"""


def whole_page(page, name: str) -> None:
    """A screenshot of the whole page at this width: the window as tall as the main column's content."""
    size = page.viewport_size
    tall = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": min(max(size["height"], tall), 12_000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / f"reflow_{name}_{size['width']}x{size['height']}.png"))
    page.set_viewport_size(size)


def test_pages_reflow_at_200_percent_zoom_and_at_320_px(server):
    problems = []
    with chromium_page(1366, 768) as page:
        for path in through_the_menu(page, server, PAGES):
            wait_until_settled(page, quiet_ms=500)
            name = path or "explorer"
            for width, height in SIZES:
                resized(page, width, height)
                page.evaluate("() => { delete window.__layoutLook; }")
                page.wait_for_function(AT_REST, timeout=30_000, polling=100)
                found = page.evaluate(REFLOW)
                if found:  # a table or chart can keep its old width a while (its resize observer is throttled)
                    page.wait_for_timeout(3_000)
                    found = page.evaluate(REFLOW)
                problems += [f"{name} at {width}×{height}: {p}" for p in found]
                whole_page(page, name)
            resized(page, 1366, 768)
    assert not problems, "\n".join(problems)


# JS: the animations and transitions running or about to (CSS and the Web Animations API), longer than 10 ms
MOVING = """() => document.getAnimations().map(a => [a.constructor.name, a.animationName || a.transitionProperty || '',
  a.effect && a.effect.getTiming ? Number(a.effect.getTiming().duration) || 0 : 0]).filter(([, , d]) => d > 10)"""


def test_nothing_moves_for_a_reader_who_asks_for_reduced_motion(server):
    """prefers-reduced-motion: reduce: a page that runs (Streamlit's running indicator, elements fading while they are
    redrawn) and an expander opened start no animation or transition longer than 10 ms; without it, they do (so the
    check sees them)."""
    moved = {}
    with chromium_page(1366, 768) as page:
        page.goto(f"{server}/lecture")
        wait_until_settled(page, quiet_ms=500)
        for motion in ("no-preference", "reduce"):
            page.emulate_media(reduced_motion=motion)
            # what the phase before started has ended (on a busy machine the expander's half-second close can run
            # into the next phase, and would be counted there)
            page.wait_for_function("() => !document.getAnimations().some(a => a.playState === 'running')",
                                   timeout=30_000, polling=50)
            page.evaluate("() => { window.__moved = []; window.__watch = setInterval(() => window.__moved.push(...("
                          + MOVING + ")()), 20); }")
            page.get_by_text("Use your own plan").click()  # an expander opening
            page.wait_for_timeout(600)
            page.get_by_text("Use your own plan").click()
            page.wait_for_timeout(600)
            moved[motion] = page.evaluate("() => { clearInterval(window.__watch); return window.__moved; }")
        page.emulate_media(reduced_motion="no-preference")  # the shared tab as it was
    assert moved["no-preference"], "no animation seen without the preference: the check would see none either"
    assert not moved["reduce"], moved["reduce"][:10]
