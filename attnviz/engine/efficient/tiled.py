"""Exact attention computed tile by tile with an online softmax: the Flash Attention algorithm, in PyTorch.

Dense attention materialises the (n_q, n_k) score matrix. Here the queries are cut into tiles of
B_q rows and the keys into tiles of B_k columns; for one query tile we walk over the key tiles and
keep, per query row, three running quantities:

    m   the largest score seen so far                    m_new = max(m, rowmax(S_ij))
    ℓ   the softmax denominator relative to m            ℓ_new = e^(m − m_new) ℓ + rowsum(e^(S_ij − m_new))
    acc the unnormalised output relative to m            acc_new = e^(m − m_new) acc + e^(S_ij − m_new) V_j

and at the end output = acc / ℓ. Rescaling by e^(m − m_new) whenever the maximum grows is what lets the
softmax be computed in one pass without ever holding a whole row. Only one (B_q, B_k) tile of scores
exists at a time, so memory grows like n·d, not n². The result is exact (not an approximation): equal
to softmax(Q Kᵀ · s + M) V up to float rounding.

Fully masked rows: ℓ stays 0 and the row's output is 0, the engine's policy (never NaN).
"""

from __future__ import annotations

import torch

from attnviz.engine.attention import resolve_scale
from attnviz.engine.efficient._checks import check_knob, check_mask, check_qkv


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
                    scale: bool | float | None = None, block_size: int = 64, causal: bool = False) -> torch.Tensor:
    """softmax(Q Kᵀ · s + M) V, tile by tile. q (..., n_q, d_k), k (..., n_k, d_k), v (..., n_k, d_v) -> (..., n_q, d_v).

    mask: bool, True = may attend, broadcastable to (..., n_q, n_k). causal=True builds the causal mask
    tile by tile instead (nothing n × n at all), on top of `mask` if both are given. block_size is the
    tile size B_q = B_k; it need not divide n (the last tile is shorter). Key tiles that the mask forbids
    entirely are skipped: that is where a causal or sparse mask saves work.
    """
    check_qkv(q, k, v)
    n_q, n_k = q.shape[-2], k.shape[-2]
    mask = check_mask(mask, n_q, n_k)
    block = check_knob("The tile size", block_size, 1, None)
    s = resolve_scale(scale, q.shape[-1])
    if mask is not None:
        mask = mask.expand(*mask.shape[:-2], n_q, n_k)  # a view: lets a (1, n_k) mask be sliced by query tiles
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2],
                                   mask.shape[:-2] if mask is not None else ())
    out = q.new_zeros(*batch, n_q, v.shape[-1])  # (..., n_q, d_v)
    for i0 in range(0, n_q, block):
        i1 = min(i0 + block, n_q)
        q_i = q[..., i0:i1, :] * s  # (..., B_q, d_k): the scale folded into the queries once
        m = q.new_full((*batch, i1 - i0, 1), float("-inf"))  # running row maximum     (..., B_q, 1)
        denom = q.new_zeros(*batch, i1 - i0, 1)  # running softmax denominator ℓ         (..., B_q, 1)
        acc = q.new_zeros(*batch, i1 - i0, v.shape[-1])  # running Σ e^(S − m) V          (..., B_q, d_v)
        for j0 in range(0, n_k, block):
            j1 = min(j0 + block, n_k)
            if causal and j0 > i1 - 1:
                break  # every later key tile lies entirely after the last query of this tile
            allowed = _tile_mask(mask, causal, i0, i1, j0, j1, q.device)
            if allowed is not None and not bool(allowed.any()):
                continue  # the mask forbids this whole tile: skip its work entirely
            scores = q_i @ k[..., j0:j1, :].transpose(-2, -1)  # S_ij = Q_i K_jᵀ · s        (..., B_q, B_k)
            if allowed is not None:
                scores = scores.masked_fill(~allowed, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))  # (..., B_q, 1)
            # A row with nothing allowed yet has m_new = −inf; shifting by 0 instead keeps e^(−inf − 0) = 0, not NaN.
            shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(scores - shift)  # e^(S_ij − m_new)                              (..., B_q, B_k)
            rescale = torch.exp(m - shift)  # e^(m − m_new): old sums were relative to the old maximum
            denom = rescale * denom + p.sum(dim=-1, keepdim=True)
            acc = rescale * acc + p @ v[..., j0:j1, :]
            m = m_new
        # output = acc / ℓ; a fully masked row has ℓ = 0 and acc = 0, and gets 0 (the engine's policy)
        out[..., i0:i1, :] = acc / torch.where(denom > 0, denom, torch.ones_like(denom))
    return out


def _tile_mask(mask: torch.Tensor | None, causal: bool, i0: int, i1: int, j0: int, j1: int,
               device: torch.device) -> torch.Tensor | None:
    """The (.., B_q, B_k) part of the mask for one tile, causal built on the fly; None = everything allowed."""
    allowed = None if mask is None else mask[..., i0:i1, j0:j1]
    if causal and j1 - 1 > i0:  # some key in this tile lies after some query: the tile straddles the diagonal
        rows = torch.arange(i0, i1, device=device).unsqueeze(1)  # (B_q, 1)
        cols = torch.arange(j0, j1, device=device).unsqueeze(0)  # (1, B_k)
        below = cols <= rows  # (B_q, B_k)
        allowed = below if allowed is None else allowed & below
    return allowed
