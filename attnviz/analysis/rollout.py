"""Attention rollout (Abnar & Zuidema, 2020): how much each input token feeds each position after
several layers, not just one.

One layer's pattern only says where a position looks among the *previous layer's* vectors, and
those vectors are already mixtures. Rollout follows the mixing back to the input tokens:

    Â_l = normalise_rows(0.5 · mean_h A_l,h + 0.5 · I)      one layer, heads averaged, residual added
    R_1 = Â_1,   R_l = Â_l · R_{l-1}                         layer by layer

The identity stands for the residual connection: a layer's output is its input plus the attention
output, so half of every position's "mixture" is itself. Row i of R_l says how much of each input
token has reached position i after layer l. Products of row-stochastic matrices are row-stochastic,
so every row of every R_l sums to 1. It is a heuristic (it ignores values, W_O, the FFN and the
LayerNorms), useful for a picture, not a proof.
"""

from __future__ import annotations

import torch

from attnviz.errors import AttnvizError


def layer_transition(attentions: torch.Tensor, residual: float = 0.5) -> torch.Tensor:
    """Â_l = normalise_rows((1 - r) · mean_h A_l,h + r · I) for every layer: (L, H, n, n) -> (L, n, n).

    A fully masked query row (all zeros) becomes r · e_i and, once normalised, e_i: the position
    keeps only itself, which is what the residual stream does when attention adds nothing.
    """
    _check_attentions(attentions)
    if not 0.0 < residual <= 1.0:
        raise AttnvizError(f"The residual share must be in (0, 1], got {residual}.")
    n = attentions.shape[-1]
    # layer by layer: a float64 copy of every layer at once (151 MB at 512 tokens) is fresh memory to fault in
    heads_mean = torch.stack([layer.double().mean(0) for layer in attentions])  # average the heads (L, n, n)
    eye = torch.eye(n, dtype=torch.float64, device=attentions.device)  # (n, n) the residual path
    mixed = (1.0 - residual) * heads_mean + residual * eye  # (L, n, n)
    return mixed / mixed.sum(-1, keepdim=True)  # rows sum to 1 again; every row sum is ≥ residual > 0


def attention_rollout(attentions: torch.Tensor, residual: float = 0.5) -> torch.Tensor:
    """Cumulative rollout after each layer: (L, H, n, n) -> (L, n, n); [-1] is the whole model.

    rollout[l][i, j] = how much of input token j has reached position i after layer l.
    Computed in float64 (many small products), returned in the attentions' dtype.
    """
    transitions = layer_transition(attentions, residual)  # (L, n, n)
    rollouts = [transitions[0]]
    for step in transitions[1:]:
        rollouts.append(step @ rollouts[-1])  # R_l = Â_l · R_{l-1}  (n, n)
    return torch.stack(rollouts).to(attentions.dtype)  # (L, n, n)


def _check_attentions(attentions: torch.Tensor) -> None:
    if not isinstance(attentions, torch.Tensor) or attentions.dim() != 4:
        shape = tuple(attentions.shape) if isinstance(attentions, torch.Tensor) else type(attentions).__name__
        raise AttnvizError(f"Rollout needs attentions of shape (layers, heads, n, n), got {shape}.")
    if attentions.shape[-1] != attentions.shape[-2] or attentions.shape[0] == 0:
        raise AttnvizError(f"Rollout needs at least one layer of square patterns, got {tuple(attentions.shape)}.")
