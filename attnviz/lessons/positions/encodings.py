"""Absolute position embeddings as matrices: the sinusoidal table, a model's learned table, and how the
dot product of two positions depends on their distance.

Shapes: P positions, C = d_model. A Gram matrix G = PE · PEᵀ is (P, P); its diagonal at offset
Δ = j − i holds every pair of positions that lie Δ apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.models.stack import sinusoidal_positions
from attnviz.errors import AttnvizError

MAX_POSITIONS = 512
MAX_D_MODEL = 1024


def sinusoidal_table(n_positions: int, d_model: int) -> torch.Tensor:
    """PE (P, C) of the original paper, checked for sizes a page can draw (d_model even, so sin and cos pair up)."""
    if not isinstance(n_positions, int) or not 2 <= n_positions <= MAX_POSITIONS:
        raise AttnvizError(f"Pick between 2 and {MAX_POSITIONS} positions (got {n_positions!r}).")
    if not isinstance(d_model, int) or not 2 <= d_model <= MAX_D_MODEL or d_model % 2:
        raise AttnvizError(f"d_model must be an even number between 2 and {MAX_D_MODEL} (got {d_model!r}): "
                           "each frequency needs a sin and a cos column.")
    return sinusoidal_positions(n_positions, d_model)


def learned_table(model, n_positions: int, first: int = 0) -> torch.Tensor:
    """n rows of a model's learned position embeddings from position `first` on (P, C), past RoBERTa's padding offset."""
    emb = model.embedder
    if emb.position is None:
        raise AttnvizError(f"{model.name} adds no position embeddings to its tokens.")
    available = emb.position.shape[0] - emb.position_offset - first
    if first < 0 or not 2 <= n_positions <= available:
        raise AttnvizError(f"{model.name} has {available} learned positions from position {first} on: "
                           f"pick between 2 and {available}.")
    start = emb.position_offset + first
    return emb.position[start : start + n_positions].float().cpu()  # (P, C)


def position_dot_products(pe: torch.Tensor) -> torch.Tensor:
    """G[i, j] = PE_i · PE_j: (P, P). For sinusoids Σ_k sin(iω_k)sin(jω_k) + cos(iω_k)cos(jω_k) = Σ_k cos((i−j)ω_k)."""
    return pe @ pe.T  # (P, P)


@dataclass
class DistanceProfile:
    """G summarised along its diagonals: one entry per distance Δ = |i − j| = 0 .. P−1."""

    distance: torch.Tensor  # (P,) 0 .. P-1
    mean: torch.Tensor  # (P,) mean of G over all pairs Δ apart
    low: torch.Tensor  # (P,) min of G over those pairs
    high: torch.Tensor  # (P,) max of G over those pairs
    n_pairs: torch.Tensor  # (P,) how many pairs lie Δ apart (P − Δ)

    @property
    def spread(self) -> torch.Tensor:
        """(P,) max − min along each diagonal: 0 when G depends on the distance only."""
        return self.high - self.low

    @property
    def max_spread(self) -> float:
        """The largest spread along any diagonal that holds at least two pairs."""
        several = self.n_pairs >= 2
        return float(self.spread[several].max()) if several.any() else 0.0

    @property
    def widest_distance(self) -> int:
        """The Δ whose diagonal has the largest spread (among those with at least two pairs)."""
        spread = torch.where(self.n_pairs >= 2, self.spread, torch.zeros_like(self.spread))
        return int(spread.argmax())

    @property
    def value_range(self) -> float:
        """max − min of the whole mean profile: what the spreads are small or large against."""
        return float(self.mean.max() - self.mean.min())


def distance_profile(gram: torch.Tensor) -> DistanceProfile:
    """Mean and spread (max − min) of G along each diagonal Δ = 0 .. P−1 (G symmetric, so Δ ≥ 0 is enough)."""
    P = gram.shape[0]
    diagonals = [torch.diagonal(gram, offset=d) for d in range(P)]  # each (P − d,): the pairs (i, i + d)
    stat = lambda f: torch.stack([f(diag) for diag in diagonals])
    return DistanceProfile(torch.arange(P), stat(torch.mean), stat(torch.min), stat(torch.max), torch.arange(P, 0, -1))


def learned_positions_source(model) -> tuple[object | None, str]:
    """Which learned table to show: the model on screen when it learned one, else None (use the bundled model).

    The toy's table is sinusoidal and a RoPE model has none; BERT-like models, GPT-2 and BART learned theirs.
    """
    if model.cfg.positions == "learned" and model.embedder.position is not None:
        return model, f"{model.name}'s learned position embeddings"
    return None, f"{model.name} has no learned position table, so this part shows the bundled all-MiniLM-L6-v2's"


def profile_sentence(prof: DistanceProfile, name: str, distances: tuple[int, ...] = (1, 2, 5, 10)) -> str:
    """What the numbers along a few diagonals say, as a sentence of measurements (no verdict)."""
    parts = []
    for d in distances:
        if d < len(prof.distance) and prof.n_pairs[d] >= 2:
            parts.append(f"Δ = {d}: {float(prof.low[d]):.3g} to {float(prof.high[d]):.3g} (mean {float(prof.mean[d]):.3g})")
    shown = "; ".join(parts)
    return (f"{name}, dot products of positions Δ apart, from the smallest to the largest over all such pairs: "
            f"{shown}. The means across all distances span {prof.value_range:.3g}; the widest diagonal spans "
            f"{prof.max_spread:.3g} (Δ = {prof.widest_distance}"
            + (", the squared lengths PE_i · PE_i)." if prof.widest_distance == 0 else ")."))
