"""The command line every training script shares: steps, seed, output folder, --quick and threads."""

from __future__ import annotations

import argparse
from pathlib import Path


def training_parser(doc: str, steps: int, out: Path, threads: int, out_help: str = "output folder") -> argparse.ArgumentParser:
    """A parser with the shared arguments (a script adds its own); steps, out, threads: the shipped recipe's."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--steps", type=int, default=steps, help=f"optimizer steps (default {steps})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=out, help=f"{out_help} (default {out})")
    parser.add_argument("--quick", action="store_true", help="a few steps only (CI): proves the script runs")
    parser.add_argument("--threads", type=int, default=threads,
                        help=f"CPU threads (default {threads}, as the shipped weights were made: the thread count "
                             "changes the bits)")
    return parser
