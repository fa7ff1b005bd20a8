"""What the heatmap's keyboard and screen-reader parts cost in a real Chromium (attnviz/components/heatmap/access.js,
table.js): the one-line summary (a scan of every cell), a cursor move by an arrow key, and filling the table view,
for 12 heads of 16 to 512 tokens, beside the heatmap's own decode and paint. Drawn from saved HTML files
(attnviz.save_html, the same JS as the app's), so no server's time is in the figures.

    python benchmarks/bench_heatmap_access.py [--repeat 3]

Targets: a cursor move well under a frame (16 ms) at every size; the summary after each drawing up to 300,000 cells
(mount.js SUMMARY_AFTER_DRAW_CELLS), where it should cost a few ms, else on the grid's first focus; the table view
opened in under a second at 512 tokens.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_helpers import CHROMIUM_ARGS  # noqa: E402 - after the path above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the path above

import attnviz  # noqa: E402 - after the path above

SIZES = (16, 64, 128, 512)
HEADS = 12
HOOK = "window.attnvizHeatmaps['attnviz-heads']"
MEASURE = """() => { const s = document.querySelector('.avhm').__avhm, out = {};
  s.named = null;  // the summary again, as on a first focus of new cells
  let t = performance.now(); s.wrap.focus(); out.focus = performance.now() - t; out.summary = s.hook.summaryMs;
  const moves = [];
  for (let i = 0; i < 20; i++) {
    t = performance.now();
    s.wrap.dispatchEvent(new KeyboardEvent('keydown', { key: i % 2 ? 'ArrowRight' : 'ArrowDown', bubbles: true }));
    moves.push(performance.now() - t);
  }
  out.move = moves.sort((a, b) => a - b)[10];
  s.table.drawn = null; s.table.box.open = true;
  t = performance.now(); s.table.box.ontoggle(); out.table = performance.now() - t;
  out.rows = s.table.body.querySelectorAll('tbody tr').length;
  out.draw = s.hook.ms;
  return out; }"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="page loads per size (the median is printed)")
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    print(f"{'tokens':>6} {'cells':>9} {'draw ms':>8} {'summary ms':>10} {'focus ms':>9} {'move ms':>8} "
          f"{'table ms':>9} {'rows':>6}")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for n in SIZES:
            att = torch.softmax(torch.randn(1, HEADS, n, n, generator=gen) * 3, dim=-1)  # (layers, heads, n, n)
            path = attnviz.save_html(att, Path(tmp) / f"heads_{n}.html", tokens=[f"t{i}" for i in range(n)])
            runs = []
            for _ in range(args.repeat):
                page.goto(path.resolve().as_uri())
                page.wait_for_function(f"() => window.attnvizHeatmaps && {HOOK} && {HOOK}.draws >= 1", timeout=120_000)
                page.wait_for_timeout(300)
                runs.append(page.evaluate(MEASURE))
            mid = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(f"{n:>6} {HEADS * n * n:>9,} {mid['draw']:>8.1f} {mid['summary']:>10.1f} {mid['focus']:>9.1f} "
                  f"{mid['move']:>8.2f} {mid['table']:>9.1f} {int(mid['rows']):>6}")
        browser.close()


if __name__ == "__main__":
    main()
