"""axe-core's WCAG 2.0/2.1 A and AA violations over every page of a checkout's app, counted per rule: the figures
the accessibility statement's "before and after" come from. Each page is opened from its address in real Chromium
at 1366×768 and at 390×844, left to finish drawing, and checked by axe (tests/axe_check.py: the pinned axe-core
that tests/install_browser.sh installs). The tests (tests/browser/test_browser.py, test_browser_lecture_walk.py)
fail on any violation; this script counts them, for a checkout that has many.

    python benchmarks/axe_rules.py [--checkout PATH]   # PATH: another checkout of attnviz (default: this one)

The pages are this checkout's menu (tests/menu_source.py); a page the other checkout lacks is counted as such.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from axe_check import RUN, WCAG_AA, inject  # noqa: E402 - after the path above
from browser_helpers import CHROMIUM_ARGS, wait_until_settled  # noqa: E402 - after the path above
from menu_source import app_menu  # noqa: E402 - after the path above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the path above
from streamlit_servers import start_streamlit, stop_child  # noqa: E402 - after the path above

SIZES = ((1366, 768), (390, 844))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=Path, default=ROOT)
    args = parser.parse_args()
    proc, url = start_streamlit(timeout=180, checkout=args.checkout)
    per_rule: dict[tuple[int, int], Counter] = {size: Counter() for size in SIZES}
    serious: dict[tuple[int, int], int] = dict.fromkeys(SIZES, 0)
    pages_with: dict[tuple[int, int], int] = dict.fromkeys(SIZES, 0)
    pages = [(path, title) for _, path, title in app_menu()]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page()
            for path, title in pages:
                for width, height in SIZES:
                    page.set_viewport_size({"width": width, "height": height})
                    page.goto(f"{url}/{path}")
                    wait_until_settled(page, quiet_ms=800)
                    inject(page)
                    rows = page.evaluate(RUN, [WCAG_AA, []])
                    per_rule[(width, height)].update(row["rule"] for row in rows)
                    serious[(width, height)] += sum(row["impact"] in ("serious", "critical") for row in rows)
                    pages_with[(width, height)] += bool(rows)
                    print(f"{title} at {width}×{height}: {len(rows)} violations", flush=True)
            browser.close()
    finally:
        stop_child(proc)
    print(f"\n{args.checkout}: {len(pages)} pages")
    for size in SIZES:
        print(f"{size[0]}×{size[1]}: {sum(per_rule[size].values())} failing elements ({serious[size]} serious or "
              f"critical) on {pages_with[size]} of {len(pages)} pages")
        for rule, count in per_rule[size].most_common():
            print(f"  {rule}: {count}")


if __name__ == "__main__":
    main()
