"""The learning-rate schedule every attnviz training script uses: linear warm-up, then cosine decay to a floor."""

from __future__ import annotations

import math


def warmup_cosine(step: int, steps: int, lr: float, warmup: int, floor: float) -> float:
    """The rate at `step` (0-based) of `steps`: lr·(step+1)/warmup while warming up, then from lr down a half cosine
    to floor·lr at the last step."""
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
