"""What every attnviz training script writes beside its weights: the tokenizer's two files and the recipe."""

from __future__ import annotations

import json
from pathlib import Path


def write_tokenizer_and_recipe(out: Path, tokenizer, tokenizer_config: dict, report: dict) -> None:
    """tokenizer.json (a `tokenizers` Tokenizer, as it is now), tokenizer_config.json and training.json into `out`."""
    tokenizer.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    (out / "training.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"saved to {out}", flush=True)
