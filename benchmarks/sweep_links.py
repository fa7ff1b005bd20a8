"""The long run of the generated link sweep (tests/link_sweep.py): many more generated links and typed values per page
than the suite's seeded sample, every option of every choice opened to find keys, and a list of everything found.

    python benchmarks/sweep_links.py [--cases 200] [--typed 40] [--seed 1] [--page find_head] [--quick]

Prints per page: the keys found, the cases run, and each problem (a run that ends in something other than a drawn
page or a clear message) with the link that caused it; then the totals. Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import link_sweep as ls  # noqa: E402 — from tests/, put on sys.path above
from apptest_helpers import app_menu  # noqa: E402

from ui import access  # noqa: E402


def sweep_one(file: str, path: str, args, seed: int, found: dict) -> int:
    """Sweep one page's links and boxes, adding what it finds to `found`; print its line; the number of cases run."""
    t0 = time.perf_counter()
    keys = ls.page_keys(file, deep=not args.quick)
    counts = {"links": 0, "typed": 0, "slowest": 0.0, "problems": 0}

    def record(kind):
        def on_case(case, problems, at, seconds):
            counts[kind] += 1
            counts["slowest"] = max(counts["slowest"], seconds)
            counts["problems"] += len(problems)
            for problem in problems:
                found[path, problem.split(":")[0]].append(f"{ls.shorten(case, 160)} -> {problem[:400]}")
        return on_case

    ls.sweep_links(file, args.cases, seed, record("links"), deep=not args.quick)
    ls.sweep_typing(file, args.typed, seed, record("typed"), deep=not args.quick)
    print(f"{path:22s} keys {len(keys.keys):3d} boxes {len(keys.typed):3d}  links {counts['links']:4d}  "
          f"typed {counts['typed']:4d}  problems {counts['problems']:4d}  slowest {counts['slowest']:5.1f} s  "
          f"{time.perf_counter() - t0:6.0f} s", flush=True)
    return counts["links"] + counts["typed"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="generated links per page")
    parser.add_argument("--typed", type=int, default=40, help="generated typed values per page")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--page", action="append", help="a page's URL path (the explorer: explorer); all if left out")
    parser.add_argument("--quick", action="store_true", help="find keys as the suite does (skip choices of numbers)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the pages' own logs of a caught failure: what counts is what the page shows



    access.client_address = lambda: None  # AppTest has no browser: the lecturer's own, as tests/app/conftest.py says

    paths = {file: path or "explorer" for file, path, _ in app_menu()}
    chosen = [f for f in ls.pages() if not args.page or paths[f] in args.page]
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    total_cases = 0
    started = time.perf_counter()
    for index, file in enumerate(chosen):
        total_cases += sweep_one(file, paths[file], args, args.seed + index, found)
    print(f"\n{total_cases} cases on {len(chosen)} pages in {time.perf_counter() - started:.0f} s; "
          f"{sum(len(v) for v in found.values())} problems")
    for (page, what), examples in sorted(found.items()):
        print(f"\n== {page}: {what} ({len(examples)} cases)")
        for line in examples[:5]:
            print("   ", line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
