"""How long the projector waits for each step of the default lecture plan: from the key press (→, the bar's Next) to
the step drawn, in a real server and a real headless Chromium at 1024×768 with ?present=1.

    python benchmarks/bench_lecture_steps.py [--plan attention] [--passes 2]     # prints a table; a few minutes

- "drawn": the new page shows its lecture bar, Streamlit's run is over, every heatmap component has drawn and every
  plotly chart has its SVG, and this has held for 250 ms (the time is when it first held). On a predict-first
  step the page stops at its question: that is the step drawn; the Reveal click -> the figures drawn is timed
  apart (reveal column).
- The times are wall clock: the key press is read in Python just before Playwright sends it, the drawn moment on the
  page's clock (performance.timeOrigin + performance.now(), the same machine's clock): about 50 ms of Playwright's
  round trip is in every figure.
- Pass 1 is the first class of the day on a fresh server (models loaded as the steps need them); pass 2 the same
  walk again (caches warm), what a lecture on a warmed-up server gets. Target: every step <= 3 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from apptest_helpers import app_menu  # noqa: E402
from browser_helpers import own_chromium, streamlit_server  # noqa: E402

from attnviz.lecture import load_plan, step_link  # noqa: E402
from attnviz.paths import LECTURES  # noqa: E402

# true while the page looks drawn; resolves with the epoch ms at which it first held, once it has held 250 ms
# gated: a predict-first step before Reveal (its question and Reveal drawn); revealed: after its Reveal (the button
# gone, the figures drawn); neither: a step with no gate, whose figures are drawn (a question that takes answers
# without a gate keeps its Reveal, which closes the answers)
SETTLED = """([number, total, gated, revealed]) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const reveal = !!document.querySelector('.st-key-lecture_reveal');
  const ok = !!main && main.innerText.includes(`Step ${number} of ${total}`)
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && (gated ? reveal
              : (Object.values(window.attnvizHeatmaps || {}).every(h => h.drawn)
                 && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'))
                 && !(revealed && reveal)));
  const now = performance.timeOrigin + performance.now();
  if (!ok) { window.__settledAt = null; return null; }
  if (!window.__settledAt) window.__settledAt = now;
  return now - window.__settledAt >= 250 ? window.__settledAt : null;
}"""

# what SETTLED waits for, part by part (printed when a step is never drawn)
STATE = """() => ({running: !!document.querySelector('[data-testid="stStatusWidget"]'),
  reveal: !!document.querySelector('.st-key-lecture_reveal'),
  undrawn_heatmaps: Object.entries(window.attnvizHeatmaps || {}).filter(([k, h]) => !h.drawn).map(([k]) => k),
  undrawn_charts: [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .filter(c => !c.querySelector('.main-svg')).length})"""


def settled_at(page, number: int, total: int, gated: bool, revealed: bool = False) -> float:
    """Epoch ms at which the page was first drawn (see SETTLED)."""
    page.evaluate("() => { window.__settledAt = null; }")
    try:
        return page.wait_for_function(SETTLED, arg=[number, total, gated, revealed], timeout=180_000, polling=25).json_value()
    except PlaywrightTimeout:
        shot = ROOT / "test-artifacts" / f"bench_lecture_step_{number}_stuck.png"
        page.screenshot(path=str(shot))
        raise SystemExit(f"step {number} was not drawn in 180 s (gated={gated}, {page.url}; {page.evaluate(STATE)}); "
                         f"screenshot {shot}") from None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", default="attention")
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    plan = load_plan(LECTURES / f"{args.plan}.toml", {p: t for _, p, t in app_menu()})
    n = len(plan.steps)

    with streamlit_server() as url, own_chromium() as browser:
        page = browser.new_page(viewport={"width": 1024, "height": 768})
        rows = {}
        for walk in range(1, args.passes + 1):
            page.goto(url + "/" + step_link(plan.step(1), lecture=args.plan, number=1)[2:])
            settled_at(page, 1, n, plan.step(1).predict_first)
            for number in range(1, n + 1):
                step = plan.step(number)
                if number > 1:
                    pressed = time.time() * 1000
                    page.keyboard.press("ArrowRight")
                    page.wait_for_function("(k) => new URLSearchParams(location.search).get('step') === k",
                                           arg=str(number), timeout=60_000)
                    at = settled_at(page, number, n, step.predict_first)
                    rows.setdefault(number, {})[f"key{walk}"] = (at - pressed) / 1000
                if step.predict_first:
                    clicked = time.time() * 1000
                    page.locator(".st-key-lecture_reveal button").first.click()
                    at = settled_at(page, number, n, False, revealed=True)
                    rows.setdefault(number, {})[f"reveal{walk}"] = (at - clicked) / 1000

    def cell(row: dict, key: str) -> str:
        return f"{row[key]:6.2f}" if key in row else "     -"

    passes = range(1, args.passes + 1)
    print(f"plan {args.plan}: key press (→) -> step drawn, and Reveal -> figures drawn, seconds (1024×768, present=1)")
    print("step  page                  " + "  ".join(f"key p{w}  reveal p{w}" for w in passes) + "  title")
    for number in range(1, n + 1):
        step, row = plan.step(number), rows.get(number, {})
        print(f"{number:4d}  /{step.page:<20.20s}" + "".join(f"  {cell(row, f'key{w}')}  {cell(row, f'reveal{w}')}   "
                                                             for w in passes) + f"  {step.title[:50]}")
    for w in passes:
        keys = [r[f"key{w}"] for r in rows.values() if f"key{w}" in r]
        total = [r.get(f"key{w}", 0) + r.get(f"reveal{w}", 0) for r in rows.values()]
        print(f"pass {w}: key -> drawn max {max(keys):.2f} s, median {sorted(keys)[len(keys) // 2]:.2f} s; "
              f"key + reveal max {max(total):.2f} s; steps over 3 s: "
              f"{[k for k, r in rows.items() if r.get(f'key{w}', 0) > 3 or r.get(f'reveal{w}', 0) > 3]}")


if __name__ == "__main__":
    main()
