"""RoPE on one query and one key: the rotation of each pair, and a score that sees only i − j.

D = d_head. Pair p is (x_p, x_{p+D/2}) (transformers' half split, see attnviz.engine.rope); at position
t it turns by the angle t · θ_p with θ_p = base^(−2p/D). A query at i and a key at j then score
    s(i, j) = R(i)q · R(j)k = q · R(j − i)k,
because R(i)ᵀR(j) = R(j − i): only the distance survives.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.rope import apply_rope, rope_angles, rope_frequencies
from attnviz.errors import AttnvizError

DEFAULT_THETA = 10000.0
MAX_DEMO_POSITIONS = 256


@dataclass(frozen=True)
class RopeSettings:
    theta: float
    d_head: int
    from_model: bool  # True: the model on screen rotates its own queries and keys with these
    label: str


def rope_settings(model) -> RopeSettings:
    """The model's own rotary base and head size when it has RoPE, else θ = 10000 with its d_head, labelled."""
    theta = getattr(model.cfg, "rope_theta", None) or getattr(model, "rope_theta", None)
    if theta:
        return RopeSettings(float(theta), model.d_head, True,
                            f"{model.name}'s own RoPE: θ = {float(theta):g}, d_head = {model.d_head}")
    d_head = model.d_head if model.d_head % 2 == 0 else model.d_head + 1
    return RopeSettings(DEFAULT_THETA, d_head, False,
                        f"{model.name} has no RoPE (its positions are added to the tokens), so this uses the default "
                        f"θ = {DEFAULT_THETA:g} with its d_head = {d_head}")


def seeded_query_key(d_head: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A query and a key (D,) each, entries from N(0, 1), reproducible from the seed."""
    if not isinstance(d_head, int) or d_head < 2 or d_head % 2:
        raise AttnvizError(f"RoPE turns pairs of numbers: d_head must be an even number ≥ 2 (got {d_head!r}).")
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d_head, generator=g), torch.randn(d_head, generator=g)


def rotated(x: torch.Tensor, positions: torch.Tensor, theta: float = DEFAULT_THETA) -> torch.Tensor:
    """x (D,) placed at each position and rotated there: (T, D)."""
    cos, sin = rope_angles(positions, rope_frequencies(x.shape[-1], theta))  # each (T, D)
    return apply_rope(x.expand(len(positions), -1), cos, sin)  # (T, D)


def pair_track(x: torch.Tensor, pair: int, n_positions: int, theta: float = DEFAULT_THETA) -> torch.Tensor:
    """Where pair p of x lands at positions 0 .. T−1: (T, 2) points (x_p, x_{p+D/2}) on one circle."""
    half = x.shape[-1] // 2
    if not 0 <= pair < half:
        raise AttnvizError(f"Pair {pair} does not exist: a head of {x.shape[-1]} numbers has pairs 0 .. {half - 1}.")
    r = rotated(x, torch.arange(n_positions), theta)  # (T, D)
    return torch.stack([r[:, pair], r[:, pair + half]], dim=1)  # (T, 2)


def pair_angle_step(d_head: int, pair: int, theta: float = DEFAULT_THETA) -> float:
    """θ_p in radians: how far pair p turns per position step."""
    return float(rope_frequencies(d_head, theta)[pair])


def rope_score_table(q: torch.Tensor, k: torch.Tensor, n_positions: int, theta: float = DEFAULT_THETA) -> torch.Tensor:
    """S[i, j] = R(i)q · R(j)k for i, j < T: (T, T), the unscaled score of q at i against k at j."""
    if not isinstance(n_positions, int) or not 1 <= n_positions <= MAX_DEMO_POSITIONS:
        raise AttnvizError(f"Pick between 1 and {MAX_DEMO_POSITIONS} positions (got {n_positions!r}).")
    positions = torch.arange(n_positions)
    return rotated(q, positions, theta) @ rotated(k, positions, theta).T  # (T, T)


def shift_difference(q: torch.Tensor, k: torch.Tensor, n_positions: int, shift: int,
                     theta: float = DEFAULT_THETA) -> float:
    """max over i, j < T of |S(i, j) − S(i + s, j + s)|: ≈ 0 (float rounding) when only i − j matters."""
    if not isinstance(shift, int) or shift < 0 or n_positions + shift > MAX_DEMO_POSITIONS:
        raise AttnvizError(f"The shift must be between 0 and {MAX_DEMO_POSITIONS - n_positions} here (got {shift!r}).")
    table = rope_score_table(q, k, n_positions + shift, theta)  # (T + s, T + s)
    return float((table[:n_positions, :n_positions] - table[shift:, shift:]).abs().max())


def diagonal_spread(table: torch.Tensor) -> float:
    """The largest max − min along any diagonal j − i = const of a square table: 0 when it depends on j − i only."""
    T = table.shape[0]
    spreads = [torch.diagonal(table, offset=d) for d in range(-(T - 1), T)]
    return max(float(s.max() - s.min()) for s in spreads)


def added_positions_score_table(q: torch.Tensor, k: torch.Tensor, n_positions: int) -> torch.Tensor:
    """For contrast: (q + PE_i) · (k + PE_j) with sinusoidal PE added, (T, T). The cross terms q · PE_j and
    PE_i · k depend on where each token sits, not only on i − j."""
    from attnviz.lessons.positions.encodings import sinusoidal_table

    pe = sinusoidal_table(max(n_positions, 2), q.shape[-1])[:n_positions]  # (T, D)
    return (q + pe) @ (k + pe).T  # (T, T)
