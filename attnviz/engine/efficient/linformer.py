"""Linformer: project the keys and values along the sequence from n rows down to k rows.

    Attention ≈ softmax( Q (E K)ᵀ · s ) (F V)        E, F: (k × n), so E K and F V are (k × d)

The score matrix is n × k instead of n × n: time and memory grow like n·k. The paper learns E and F;
attnviz offers two fixed choices, both seeded or deterministic:

    "random"  Gaussian entries N(0, 1/k), the Johnson–Lindenstrauss projection the paper's analysis uses
    "pooled"  row r averages a contiguous segment of about n/k tokens: identity-like, and exactly the
              identity at k = n, where Linformer equals exact attention

Keys are mixed across positions, so a causal or padding mask has no meaning here: no mask argument.
"""

from __future__ import annotations

import torch

from attnviz.engine.attention import resolve_scale
from attnviz.engine.efficient._checks import check_knob, check_self_attention
from attnviz.errors import AttnvizError

PROJECTIONS = ("pooled", "random")


def linformer_projections(n: int, rank: int, kind: str = "pooled", seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(E, F), each (rank, n): the fixed sequence projections for keys and values."""
    rank = check_knob("The Linformer rank k", rank, 1, n)
    if kind == "pooled":
        edges = torch.linspace(0, n, rank + 1).round().long()  # segment r covers tokens edges[r] .. edges[r+1]−1
        seg = torch.bucketize(torch.arange(n), edges[1:], right=True)  # which segment each token falls in (n,)
        E = torch.nn.functional.one_hot(seg, rank).T.float()  # (rank, n) 0/1
        E = E / E.sum(-1, keepdim=True)  # each row averages its segment
        return E, E.clone()
    if kind == "random":
        g = torch.Generator().manual_seed(int(seed))
        E = torch.randn(rank, n, generator=g) / rank**0.5  # (rank, n)
        F = torch.randn(rank, n, generator=g) / rank**0.5
        return E, F
    raise AttnvizError(f"Unknown Linformer projection '{kind}': choose one of {', '.join(PROJECTIONS)}.")


def linformer_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rank: int, projection: str = "pooled",
                        seed: int = 0, scale: bool | float | None = None) -> torch.Tensor:
    """softmax(Q (E K)ᵀ · s) (F V): q, k (..., n, d_k), v (..., n, d_v) -> (..., n, d_v), with 1 ≤ rank ≤ n."""
    n = check_self_attention(q, k, v, "Linformer")
    E, F = linformer_projections(n, rank, projection, seed)
    E, F = E.to(q), F.to(v)
    k_proj = E @ k  # (..., rank, d_k): k summary "keys"
    v_proj = F @ v  # (..., rank, d_v)
    scores = (q @ k_proj.transpose(-2, -1)) * resolve_scale(scale, q.shape[-1])  # (..., n, rank)
    return torch.softmax(scores, dim=-1) @ v_proj  # (..., n, d_v)
