"""Summary numbers of attention patterns. Patterns are [..., query_pos, key_pos], rows sum to 1
(or are all zero for a query whose mask forbade every key)."""

from __future__ import annotations

import torch


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """H(row) = -Σ_j a_j log a_j in nats, per query row: (..., n_q, n_k) -> (..., n_q).

    0 means all weight on one key (saturated); log(n_k) means spread evenly. 0·log 0 counts as 0.
    """
    logs = torch.where(weights > 0, weights.log(), torch.zeros_like(weights))
    return -(weights * logs).sum(-1)


def live_rows(weights: torch.Tensor) -> torch.Tensor:
    """True for query rows that attend somewhere (fully masked rows are all zeros): (..., n_q)."""
    return weights.sum(-1) > 0.5


def mean_over_live_rows(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Mean of a per-row quantity (..., n_q) over the rows that attend somewhere -> (...)."""
    live = live_rows(weights).to(values.dtype)
    return (values * live).sum(-1) / live.sum(-1).clamp(min=1)


def head_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Mean row entropy of each pattern (..., n_q, n_k) -> (...), in nats."""
    return mean_over_live_rows(row_entropy(weights), weights)


def head_max_weight(weights: torch.Tensor) -> torch.Tensor:
    """Mean over rows of the largest weight in the row (..., n_q, n_k) -> (...): near 1 = saturated."""
    return mean_over_live_rows(weights.amax(-1), weights)
