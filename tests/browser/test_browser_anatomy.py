"""The multi-head anatomy and encoder-layer pages in a real headless Chromium, at a projector's 1024×768 and
at 1920×1080: drawn without an exception, nothing wider than the window; screenshots kept in test-artifacts/."""

import os
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import DRAWN_CHARTS, chromium_page, exceptions_on, wait_for_app_idle

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SIZES = [(1024, 768), (1920, 1080)]
# the widest element inside the main column, minus the column's own width: > 0 means something sticks out
OVERFLOW = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const right = main.getBoundingClientRect().right;
  return Math.max(0, ...[...main.querySelectorAll('.katex-display > .katex, .js-plotly-plot, [data-testid="stDataFrame"]')]
    .map(e => e.getBoundingClientRect().right - right));
}"""

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path, charts", [("multihead_anatomy?model=toy", 5), ("encoder_layer?model=toy", 10)])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_page_draws_at_projector_and_desktop_sizes(server, path, charts, size):
    width, height = size
    with chromium_page(width, height) as page:
        page.goto(f"{server}/{path}")
        page.wait_for_function(f"() => ({DRAWN_CHARTS})() >= {charts}",  # plotly charts + canvas heatmaps
                               timeout=120_000, polling=200)
        wait_for_app_idle(page)
        assert not exceptions_on(page)
        assert page.evaluate(OVERFLOW) <= 1
        name = path.split("?")[0]
        page.screenshot(path=str(ARTIFACTS / f"{name}_toy_{width}x{height}.png"))
