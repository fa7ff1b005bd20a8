"""Rotary position embeddings (RoPE), as Llama, Qwen2 and Mistral apply them to queries and keys.

Each head vector of size D is treated as D/2 pairs; pair i at position p is rotated by the angle
p · θ_i with θ_i = base^(-2i/D). A rotation keeps lengths, and rot(p)·q · rot(r)·k depends on
p − r only: the score sees the distance between two tokens, not where they sit.

transformers pairs dimension i with i + D/2 (the "half split", `rotate_half`), not neighbours
2i, 2i+1; we do the same so that the numbers match theirs exactly.
"""

from __future__ import annotations

import torch


def rope_frequencies(d_head: int, theta: float = 10000.0) -> torch.Tensor:
    """θ_i = theta^(-2i/D) for i = 0 .. D/2 - 1: (D/2,) angles per position step."""
    return 1.0 / theta ** (torch.arange(0, d_head, 2, dtype=torch.int64).float() / d_head)


def rope_angles(positions: torch.Tensor, inv_freq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of p · θ_i for each position, each (T, D) with the D/2 angles repeated twice."""
    freqs = positions.float()[:, None] * inv_freq[None, :]  # (T, D/2)
    emb = torch.cat([freqs, freqs], dim=-1)  # (T, D): pair i uses columns i and i + D/2
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension: a 90° turn of every pair."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (..., T, D) rotated pairwise by its position's angles: x·cos + rotate_half(x)·sin."""
    return x * cos + rotate_half(x) * sin
