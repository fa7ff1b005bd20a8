"""The custom mask editor's data: a mask as a table of checkboxes and back, and its 'custom:' spec.

A table row is a query, a column a key, a ticked box means "may attend". Row and column names carry
the position ("3·cat"), so a repeated token keeps its own row and column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from attnviz.engine.masks import causal_mask, custom_mask
from attnviz.errors import AttnvizError

MAX_EDITOR_TOKENS = 24  # a 24×24 grid of checkboxes still fits a projector; beyond that it is a chore


def position_names(labels: list[str]) -> list[str]:
    """'0·[CLS]', '1·the', ...: unique row/column names even when a token repeats."""
    return [f"{i}·{label}" for i, label in enumerate(labels)]


def mask_to_frame(mask: torch.Tensor, labels: list[str]) -> pd.DataFrame:
    """(n, n) bool mask -> an n×n DataFrame of booleans, rows = queries, columns = keys."""
    n = len(labels)
    if tuple(mask.shape) != (n, n):
        raise AttnvizError(f"The mask is {mask.shape[0]}×{mask.shape[1]} but there are {n} tokens.")
    names = position_names(labels)
    return pd.DataFrame(mask.numpy().astype(bool), index=names, columns=names)


def frame_to_mask(frame: pd.DataFrame) -> torch.Tensor:
    """The edited table -> (n, n) bool mask. An empty cell (None) counts as forbidden."""
    values = frame.fillna(False).to_numpy(dtype=bool)  # (n, n)
    return custom_mask(torch.from_numpy(values.copy()), n=values.shape[0])


def mask_to_spec(mask: torch.Tensor) -> str:
    """(n, n) bool -> 'custom:110/011/001', the spec the sidebar and the URL take."""
    digits = (mask.numpy().astype(np.uint8) + ord("0")).tobytes()  # '0'/'1' per cell, rows one after another
    n_cols = mask.shape[1]
    return "custom:" + "/".join(digits[i:i + n_cols].decode("ascii") for i in range(0, len(digits), n_cols))


def starting_mask(spec: str | None, n: int) -> tuple[torch.Tensor, str | None]:
    """The editor's starting mask: the given 'custom:' spec when it fits n tokens, else causal.

    Returns (mask, problem): problem is a sentence for the page when the spec could not be used.
    """
    if not spec or not spec.startswith("custom:") or not spec[len("custom:"):].strip():
        return causal_mask(n), None
    try:
        return custom_mask(spec[len("custom:"):], n), None
    except AttnvizError as err:
        return causal_mask(n), f"{err} The editor starts from the causal pattern instead."


def forbidden_rows(mask: torch.Tensor) -> list[int]:
    """Queries whose every key is forbidden: softmax has nothing to spread over (weights and output 0)."""
    return (~mask.any(-1)).nonzero().flatten().tolist()
