"""Query–key space (after AttentionViz, Yeh et al. 2023): one head's queries and keys as points in one plane.

Dimension names: n tokens, d = d_head. One head's Q (n, d) and K (n, d) are the vectors whose dot products are
its scores: in a RoPE model (Llama family) after the rotation by position, and in a grouped-query model the K of
the K/V head this query head reads.

1) Put them in one space (optional, AttentionViz's normalization). Two changes that leave every weight as it is:
   - translate the keys so their mean is the queries' mean:  k_j' = k_j - mean(K) + mean(Q).
     q_i · k_j' = q_i · k_j + q_i · c, and q_i · c is the same for every key of row i: the softmax ignores it.
   - scale:  q_i'' = a q_i, k_j'' = k_j' / a with a = sqrt(mean|k'| / mean|q|), so that both have the same mean
     length;  q_i'' · k_j'' = q_i · k_j' exactly.
2) PCA of the 2n points [Q; K] together: centre them, X_c = U S Vᵀ (SVD), the first two rows of Vᵀ are the plane's
   axes, a point's coordinates are X_c Vᵀ[:2]ᵀ, and component c explains S_c² / Σ S² of the spread.
   Each axis's sign is fixed so that its largest entry (by size) is positive: the same picture on every run.

What the plane keeps and what it does not: distances between points, approximately (a projection only
shortens them), and only the share of the spread that the two components explain. Dot products are not kept,
and for one query a nearer key has the larger dot product only when the keys have equal lengths
(|q - k|² = |q|² + |k|² - 2 q·k).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError


@dataclass(frozen=True)
class HeadQK:
    q: torch.Tensor  # (n, d) the head's queries
    k: torch.Tensor  # (n, d) its keys (the K/V head it reads)
    rope: bool  # q and k are after the rotation by position
    kv_head: int  # the K/V head whose keys these are (= the head, without grouped-query attention)
    n_kv_heads: int


@dataclass(frozen=True)
class JointPCA:
    q_xy: torch.Tensor  # (n, 2) the queries in the plane
    k_xy: torch.Tensor  # (n, 2) the keys in the plane
    explained: tuple[float, float]  # share of the spread of [Q; K] along each axis (0..1)
    axes: torch.Tensor  # (2, d) the plane's unit axes (the first two principal components)
    mean: torch.Tensor  # (d,) the centre of the 2n points

    @property
    def explained_total(self) -> float:
        return self.explained[0] + self.explained[1]


def head_queries_and_keys(model, res, layer: int, head: int) -> HeadQK:
    """One head's Q and K from a run made with keep=True (the vectors the layer itself multiplied)."""
    if res.traces is None:
        raise AttnvizError("The queries and keys need a run that keeps its intermediates (keep=True).")
    if not 0 <= layer < len(res.traces):
        raise AttnvizError(f"There is no layer {layer}: this model has layers 0 to {len(res.traces) - 1}.")
    trace = res.traces[layer]
    n_heads = trace.q.shape[1]
    if not 0 <= head < n_heads:
        raise AttnvizError(f"There is no head {head}: this model has heads 0 to {n_heads - 1}.")
    n_kv = model.n_kv_heads
    return HeadQK(q=trace.q[0, head].float().cpu(), k=trace.k[0, head].float().cpu(),  # (n, d) each
                  rope=model.cfg.positions == "rope", kv_head=head // (n_heads // n_kv), n_kv_heads=n_kv)


def shared_space(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """AttentionViz's normalization (see the module text): keys moved onto the queries' mean, then both scaled to
    the same mean length. Every q_i · k_j changes by a constant per query row, so every weight stays as it was."""
    k_moved = k - k.mean(0) + q.mean(0)  # k_j' = k_j - mean(K) + mean(Q)
    q_len, k_len = q.norm(dim=1).mean(), k_moved.norm(dim=1).mean()
    if q_len <= 0 or k_len <= 0:
        return q, k_moved
    a = torch.sqrt(k_len / q_len)  # a² · mean|q| = mean|k'|: then mean|a q| = mean|k' / a|
    return q * a, k_moved / a


def fixed_sign(axes: torch.Tensor) -> torch.Tensor:
    """(c, d) axes, each flipped so that its entry of largest size is positive (a deterministic sign)."""
    biggest = axes.abs().argmax(dim=1)  # (c,)
    signs = torch.sign(axes[torch.arange(axes.shape[0]), biggest])  # (c,)
    return axes * torch.where(signs == 0, torch.ones_like(signs), signs)[:, None]


def joint_pca(q: torch.Tensor, k: torch.Tensor) -> JointPCA:
    """PCA of the 2n points [Q; K] together (see the module text), in float64."""
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or q.shape[0] == 0 or k.shape[0] == 0:
        raise AttnvizError(f"Queries and keys must be (n, d) matrices of one width; got {tuple(q.shape)} and "
                           f"{tuple(k.shape)}.")
    x = torch.cat([q, k]).double()  # (n_q + n_k, d)
    mean = x.mean(0)  # (d,)
    centred = x - mean
    _, s, vt = torch.linalg.svd(centred, full_matrices=False)  # s (r,), vt (r, d), r = min(2n, d)
    axes = torch.zeros(2, x.shape[1], dtype=x.dtype)
    axes[: min(2, vt.shape[0])] = fixed_sign(vt[:2])  # (2, d); a 1-wide space keeps a zero second axis
    xy = centred @ axes.T  # (2n, 2)
    spread = float((s**2).sum())
    shares = (s[:2] ** 2 / spread).tolist() if spread > 0 else [0.0, 0.0]
    shares += [0.0] * (2 - len(shares))
    n_q = q.shape[0]
    return JointPCA(q_xy=xy[:n_q].float(), k_xy=xy[n_q:].float(), explained=(shares[0], shares[1]),
                    axes=axes.float(), mean=mean.float())


@dataclass(frozen=True)
class Pair:
    query: int
    key: int
    weight: float


def strongest_pairs(weights: torch.Tensor, threshold: float) -> list[Pair]:
    """(n, n) weights -> every (query, key) whose weight is at least `threshold`, largest first
    (equal weights in (query, key) order)."""
    rows, cols = torch.nonzero(weights >= threshold, as_tuple=True)
    pairs = [Pair(int(i), int(j), float(weights[i, j])) for i, j in zip(rows, cols, strict=True)]
    return sorted(pairs, key=lambda p: (-p.weight, p.query, p.key))


def nearest_key_agreement(pca: JointPCA, weights: torch.Tensor, allowed: torch.Tensor | None = None) -> tuple[int, int]:
    """(queries whose most-weighted key is also their nearest allowed key in the plane, queries that attend
    somewhere). allowed: the (n, n) bool mask (True = may attend), None = every key.

    A number that says how far the plane can be read as 'a query looks at the keys near it'."""
    live = weights.sum(-1) > 0.5  # a fully masked row attends nowhere
    distance = torch.cdist(pca.q_xy.double(), pca.k_xy.double())  # (n, n)
    if allowed is not None:
        distance = distance.masked_fill(~allowed, float("inf"))
    nearest = distance.argmin(dim=1)  # (n,)
    top = weights.argmax(dim=1)  # (n,)
    return int(((nearest == top) & live).sum()), int(live.sum())


def top_key_agreement(q: torch.Tensor, k: torch.Tensor, weights: torch.Tensor, allowed: torch.Tensor | None = None
                      ) -> tuple[int, int, int]:
    """(queries whose most-weighted key is also the key with the largest dot product q·k, ... the key with the
    largest cosine, queries that attend somewhere), over allowed keys. q, k: (n, d) the vectors whose dot products
    are the scores (after RoPE where the model rotates them).

    q·k = |q| |k| cos θ: the softmax keeps the order of the scores q·k × s, so the first count is every live query
    (a check, s > 0); the cosine ("points the same way") leaves out the key's length, so it can miss."""
    live = weights.sum(-1) > 0.5  # a fully masked row attends nowhere
    dots = q.double() @ k.double().T  # (n, n) q_i·k_j
    lengths = q.double().norm(dim=1)[:, None] * k.double().norm(dim=1)[None, :]  # (n, n) |q_i| |k_j|
    cosines = dots / lengths.clamp_min(1e-12)  # (n, n) cos θ_ij
    if allowed is not None:
        dots = dots.masked_fill(~allowed, float("-inf"))
        cosines = cosines.masked_fill(~allowed, float("-inf"))
    top = weights.argmax(dim=1)  # (n,)
    by_dot = int(((dots.argmax(dim=1) == top) & live).sum())
    by_cosine = int(((cosines.argmax(dim=1) == top) & live).sum())
    return by_dot, by_cosine, int(live.sum())
