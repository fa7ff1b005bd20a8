"""Shared input checks for the efficient kernels: tensors as the engine expects them, knobs in range."""

from __future__ import annotations

import torch

from attnviz.engine.attention import check_mask, check_qkv
from attnviz.errors import AttnvizError


def check_knob(name: str, value, low: int, high: int | None = None) -> int:
    """A whole-number knob (window, block size, rank, ...) in [low, high], or a clear AttnvizError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise AttnvizError(f"{name} must be a whole number, not {value!r}.")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise AttnvizError(f"{name} must be {bound}, got {value}.")
    return value


def check_self_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, what: str) -> int:
    """Checks q, k, v like the dense engine and that queries and keys are the same positions -> n."""
    check_qkv(q, k, v)
    if q.shape[-2] != k.shape[-2]:
        raise AttnvizError(f"{what} works on self-attention: q and k need the same number of tokens, "
                           f"got {q.shape[-2]} and {k.shape[-2]}.")
    if q.shape[-2] < 1:
        raise AttnvizError(f"{what} needs at least one token.")
    return q.shape[-2]


__all__ = ["check_knob", "check_mask", "check_qkv", "check_self_attention"]
