"""How long the projector waits for each step of the default lecture plan: from the key press (→, the bar's Next) to
the step drawn, in a real server and a real headless Chromium at 1024×768 with ?present=1.

    python benchmarks/bench_lecture_steps.py [--plan attention] [--passes 2]     # prints a table; a few minutes
    python benchmarks/bench_lecture_steps.py --room [--passes 1]                 # as a lecture runs (below)

--room: as a lecture runs. The lecturer starts the class's room on the Lecture page of a fresh server, which warms
every step of the plan in the background (ui/lecture/warm.py); once the page says every step was drawn (the warm-up's
time is printed), the projector walks the room from the lecturer's link (→ for Next, the clicker's b for Reveal: a
question that takes answers has a Reveal too, which draws the class's answers), and a follower's phone (390×844, a
browser of its own) opens the room's follow link at the first and the last step: its first load, follow link -> the
step drawn. Target after the warm-up: Next <= 2 s, Reveal <= 1.5 s.

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
from urllib.parse import parse_qsl, urlsplit

from playwright.sync_api import TimeoutError as PlaywrightTimeout

os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from apptest_helpers import app_menu  # noqa: E402
from browser_helpers import cpu_seconds, own_chromium, streamlit_server, wait_for_app_idle, wait_for_text  # noqa: E402

from attnviz.lecture import load_plan, step_link  # noqa: E402
from attnviz.paths import LECTURES  # noqa: E402

# true while the page looks drawn; resolves with the epoch ms at which it first held, once it has held 250 ms
# gated: a predict-first step before Reveal (its question and Reveal drawn; a follower's: its question); revealed:
# after its Reveal (the button gone, the figures drawn); neither: a step with no gate, whose figures are drawn (a
# question that takes answers without a gate keeps its Reveal, which closes the answers)
SETTLED = """([number, total, gated, revealed, follower]) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const reveal = !!document.querySelector(follower ? '.st-key-lecture_question' : '.st-key-lecture_reveal');
  const app = document.querySelector('[data-testid="stApp"]');
  const ok = !!main && main.innerText.includes(`Step ${number} of ${total}`)
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !!app && app.getAttribute('data-test-script-state') === 'notRunning'
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


def settled_at(page, number: int, total: int, gated: bool, revealed: bool = False, follower: bool = False) -> float:
    """Epoch ms at which the page was first drawn (see SETTLED). follower: a student's page (gated: its question)."""
    page.evaluate("() => { window.__settledAt = null; }")
    try:
        return page.wait_for_function(SETTLED, arg=[number, total, gated, revealed, follower], timeout=180_000,
                                      polling=25).json_value()
    except PlaywrightTimeout:
        shot = ROOT / "test-artifacts" / f"bench_lecture_step_{number}_stuck.png"
        page.screenshot(path=str(shot))
        raise SystemExit(f"step {number} was not drawn in 180 s (gated={gated}, {page.url}; {page.evaluate(STATE)}); "
                         f"screenshot {shot}") from None


def start_room(browser, url, plan_id: str) -> tuple[str, float]:
    """The lecturer starts the plan's room on the Lecture page (this machine: a lecturer) -> (the projector's link for
    step 1, with the room's presenter key; the seconds from Start to every step warmed). Prints what the page says of
    the warm-up and the server's CPU seconds meanwhile."""
    lecturer = browser.new_page(viewport={"width": 1366, "height": 900})
    lecturer.goto(f"{url}/lecture?lecture={plan_id}")
    wait_for_text(lecturer, "Lecture mode")
    wait_for_app_idle(lecturer)
    started, cpu = time.time(), cpu_seconds(url.pid)
    lecturer.get_by_role("button", name="Start the class's room").click()
    link = lecturer.get_by_role("link", name="Open step 1 on the projector")
    link.wait_for(timeout=120_000)
    href = link.get_attribute("href")
    text = wait_for_text(lecturer, "Every step was drawn once on this server", timeout_ms=1_800_000)
    warmed = time.time() - started
    said = next(line for line in text.splitlines() if "Every step was drawn" in line)
    print(f"warm-up: {said} (server CPU {cpu_seconds(url.pid) - cpu:.1f} s)")
    lecturer.close()
    return href, warmed


def follower_first_load(browser, url: str, room: str, number: int, total: int, step) -> float:
    """A phone that opens the room's follow link: seconds from the load to its step drawn (its question, where it asks
    first)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone = context.new_page()
    opened = time.time() * 1000
    phone.goto(f"{url}/follow?room={room}")
    # its address stays the room's follow link (no step in it): the bar says the step
    wait_for_text(phone, f"Step {number} of {total}", timeout_ms=60_000)
    at = settled_at(phone, number, total, step.predict_first, follower=True)
    context.close()
    return (at - opened) / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", default="attention")
    parser.add_argument("--passes", type=int, default=None)
    parser.add_argument("--room", action="store_true", help="as a lecture runs: a room, warmed, then the walk")
    args = parser.parse_args()
    passes = args.passes or (1 if args.room else 2)
    plan = load_plan(LECTURES / f"{args.plan}.toml", {p: t for _, p, t in app_menu()})
    n = len(plan.steps)

    with streamlit_server() as url, own_chromium() as browser:
        first = step_link(plan.step(1), lecture=args.plan, number=1)
        followers = {}
        if args.room:
            first, warmed = start_room(browser, url, args.plan)
            room = dict(parse_qsl(urlsplit(first).query))["room"]
            print(f"room {room}: every step of {args.plan} warmed {warmed:.1f} s after Start")
        page = browser.new_page(viewport={"width": 1024, "height": 768})
        rows = {}
        for walk in range(1, passes + 1):
            page.goto(url + "/" + first[2:])
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
                if args.room and walk == 1 and number in (1, n):
                    followers[number] = follower_first_load(browser, url, room, number, n, step)
                if step.predict_first or (args.room and step.answer is not None):
                    clicked = time.time() * 1000
                    page.keyboard.press("b")  # the clicker's blank-screen key: Reveal
                    at = settled_at(page, number, n, False, revealed=True)
                    rows.setdefault(number, {})[f"reveal{walk}"] = (at - clicked) / 1000

    def cell(row: dict, key: str) -> str:
        return f"{row[key]:6.2f}" if key in row else "     -"

    passes = range(1, passes + 1)
    print(f"plan {args.plan}: key press (→) -> step drawn, and Reveal -> figures drawn, seconds (1024×768, present=1)"
          + (", in a room after its warm-up" if args.room else ""))
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
        reveals = [r[f"reveal{w}"] for r in rows.values() if f"reveal{w}" in r]
        if reveals:
            print(f"pass {w}: Reveal -> drawn max {max(reveals):.2f} s, median {sorted(reveals)[len(reveals) // 2]:.2f} s; "
                  f"steps over 2 s on Next: {[k for k, r in rows.items() if r.get(f'key{w}', 0) > 2]}, over 1.5 s on "
                  f"Reveal: {[k for k, r in rows.items() if r.get(f'reveal{w}', 0) > 1.5]}")
    for number, seconds in followers.items():
        print(f"a follower's first load (follow link -> step {number} drawn): {seconds:.2f} s")


if __name__ == "__main__":
    main()
