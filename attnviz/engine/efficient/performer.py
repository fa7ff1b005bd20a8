"""Performer (FAVOR+): softmax attention approximated with m positive random features, in time linear in n.

The softmax kernel is an expectation over random vectors w ~ N(0, I):

    exp(q·k) = E_w[ φ_w(q) φ_w(k) ],   φ_w(x) = exp(w·x − ‖x‖²/2)   (always positive)

With m draws w_1..w_m stacked as rows of W (m × d), φ(x) = exp(W x − ‖x‖²/2) / √m ∈ ℝᵐ and

    Attention ≈ D⁻¹ φ(Q) (φ(K)ᵀ V),   D = diag(φ(Q) (φ(K)ᵀ 1))

Multiplying φ(K)ᵀ V first ((m × n)(n × d_v) = m × d_v) never forms anything n × n: time and memory grow
like n·m. The scale s is folded in as x = √s · q and √s · k, so φ(q)·φ(k) estimates exp(s q·k).
The w's are drawn orthogonal in blocks of d (Gram–Schmidt through QR) with Gaussian lengths, which
lowers the variance; more features m give a smaller error. Seeded: the same seed, the same features.
"""

from __future__ import annotations

import math

import torch

from attnviz.engine.attention import resolve_scale
from attnviz.engine.efficient._checks import check_knob, check_self_attention
from attnviz.errors import AttnvizError

MAX_FEATURES = 65536


def orthogonal_random_features(m: int, d: int, seed: int = 0) -> torch.Tensor:
    """W (m, d): blocks of d mutually orthogonal rows, each row's length drawn like a N(0, I_d) vector's."""
    m = check_knob("The number of random features m", m, 1, MAX_FEATURES)
    g = torch.Generator().manual_seed(int(seed))
    blocks = []
    for _ in range(-(-m // d)):
        gaussian = torch.randn(d, d, generator=g)
        q_mat, r_mat = torch.linalg.qr(gaussian)  # (d, d) orthonormal columns
        q_mat = q_mat * torch.sign(torch.diagonal(r_mat))  # fix QR's sign choice: a uniformly random rotation
        blocks.append(q_mat.T)  # d orthonormal rows
    W = torch.cat(blocks)[:m]  # (m, d)
    lengths = torch.randn(m, d, generator=g).norm(dim=-1, keepdim=True)  # chi(d) lengths, as Gaussian rows have
    return W * lengths  # (m, d)


def positive_features(x: torch.Tensor, W: torch.Tensor, is_query: bool) -> torch.Tensor:
    """φ(x) = exp(W x − ‖x‖²/2 − c) / √m, (..., n, d) -> (..., n, m).

    c is a stabiliser that keeps exp from overflowing: per row for queries, one number for all keys. Both
    cancel in D⁻¹ φ(Q) φ(K)ᵀ V (a query's c divides its numerator and denominator alike; the keys' c is common).
    """
    logits = x @ W.T - (x * x).sum(-1, keepdim=True) / 2  # W x − ‖x‖²/2   (..., n, m)
    c = logits.amax(dim=-1, keepdim=True) if is_query else logits.amax(dim=(-2, -1), keepdim=True)
    return torch.exp(logits - c) / math.sqrt(W.shape[0])


def performer_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, features: int, seed: int = 0,
                        scale: bool | float | None = None) -> torch.Tensor:
    """D⁻¹ φ(Q) (φ(K)ᵀ V): q, k (..., n, d_k), v (..., n, d_v) -> (..., n, d_v); features = m, 1 ≤ m ≤ 65536."""
    check_self_attention(q, k, v, "Performer")
    s = resolve_scale(scale, q.shape[-1])
    if s <= 0:
        raise AttnvizError("Performer's random features estimate exp(s·q·k) for a positive scale s only.")
    W = orthogonal_random_features(features, q.shape[-1], seed).to(q)
    root = math.sqrt(s)
    phi_q = positive_features(q * root, W, is_query=True)  # (..., n, m)
    phi_k = positive_features(k * root, W, is_query=False)  # (..., n, m)
    kv = phi_k.transpose(-2, -1) @ v  # φ(K)ᵀ V     (..., m, d_v): the n × n product never forms
    normaliser = phi_q @ phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # D = φ(Q) (φ(K)ᵀ 1)  (..., n, 1)
    return (phi_q @ kv) / normaliser.clamp_min(torch.finfo(q.dtype).tiny)  # (..., n, d_v)
