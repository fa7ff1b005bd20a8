"""Reformer's LSH attention: hash similar vectors into the same bucket and attend only within buckets.

Reformer shares queries and keys: the keys are the queries normalised to length 1, k̂_j = q_j / ‖q_j‖,
so a query scores q_i · k̂_j · s. Exact shared-QK attention is softmax(Q K̂ᵀ · s) V (`shared_qk_attention`).

Angular LSH: for b buckets draw a random rotation R (d × b/2); the bucket of x is
argmax([x R ; −x R]). Vectors pointing the same way tend to land in the same bucket, and those are
the pairs with the largest scores, the ones that dominate the softmax. One hashing round:

    1) bucket every position; 2) sort positions by (bucket, position); 3) cut the sorted order into
    chunks of c = ⌈n / b⌉; 4) each chunk attends to itself and the chunk before it, same bucket only.

Scores are c × 2c per chunk: time and memory grow like n·c. Several rounds (different rotations) lower
the chance that two close vectors are always split; their outputs are combined with weights
softmax over rounds of each round's log-sum-exp, and a pair found in several rounds has its score
lowered by log(number of rounds whose hashes agree), so it is not counted twice. With 1 bucket there is
one chunk of all n positions, and the result is exact shared-QK attention.
"""

from __future__ import annotations

import torch

from attnviz.engine.attention import resolve_scale
from attnviz.engine.efficient._checks import check_knob, check_self_attention
from attnviz.errors import AttnvizError

MAX_ROUNDS = 16


def shared_keys(qk: torch.Tensor) -> torch.Tensor:
    """k̂ = q / ‖q‖: Reformer's keys are its queries, normalised (..., n, d)."""
    return qk / qk.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def shared_qk_attention(qk: torch.Tensor, v: torch.Tensor, scale: bool | float | None = None) -> torch.Tensor:
    """Exact shared-QK attention softmax(Q K̂ᵀ · s) V, the reference LSH attention approximates (..., n, d_v)."""
    check_self_attention(qk, qk, v, "Shared-QK attention")
    scores = qk @ shared_keys(qk).transpose(-2, -1) * resolve_scale(scale, qk.shape[-1])  # (..., n, n)
    return torch.softmax(scores, dim=-1) @ v


def lsh_buckets(x: torch.Tensor, n_buckets: int, n_rounds: int, seed: int = 0) -> torch.Tensor:
    """(n_rounds, ..., n) bucket ids in 0..n_buckets−1: argmax([x R_r ; −x R_r]) for a seeded rotation per round."""
    if n_buckets == 1:
        return torch.zeros(n_rounds, *x.shape[:-1], dtype=torch.long, device=x.device)
    g = torch.Generator().manual_seed(int(seed))
    R = torch.randn(n_rounds, x.shape[-1], n_buckets // 2, generator=g).to(x)  # (rounds, d, b/2)
    rotated = torch.einsum("...nd,rdh->r...nh", x, R)  # (rounds, ..., n, b/2)
    return torch.cat([rotated, -rotated], dim=-1).argmax(dim=-1)  # (rounds, ..., n)


def reformer_attention(qk: torch.Tensor, v: torch.Tensor, n_buckets: int, n_rounds: int = 1, seed: int = 0,
                       scale: bool | float | None = None) -> torch.Tensor:
    """LSH attention over shared QK: qk (..., n, d), v (..., n, d_v) -> (..., n, d_v).

    n_buckets: 1, or an even number up to n. n_rounds: 1..16 hashing rounds.
    """
    n = check_self_attention(qk, qk, v, "Reformer")
    b = check_knob("The number of buckets", n_buckets, 1, max(n, 1))
    if b > 1 and b % 2:
        raise AttnvizError(f"The number of buckets must be 1 or even (half the rotations, negated), got {b}.")
    rounds = check_knob("The number of hashing rounds", n_rounds, 1, MAX_ROUNDS)
    s = resolve_scale(scale, qk.shape[-1])
    keys = shared_keys(qk)
    buckets = lsh_buckets(keys, b, rounds, seed)  # (rounds, ..., n)
    outs, lses = [], []
    for r in range(rounds):
        out_r, lse_r = _one_round(qk * s, keys, v, buckets, r, b)
        outs.append(out_r)
        lses.append(lse_r)
    lse = torch.stack(lses)  # (rounds, ..., n)
    round_weights = torch.softmax(lse, dim=0).unsqueeze(-1)  # each round's share of the total mass (rounds, ..., n, 1)
    return (round_weights * torch.stack(outs)).sum(0)  # (..., n, d_v)


def chunks(n: int, n_buckets: int) -> tuple[int, int]:
    """(c, nc): the chunk length ⌈n / b⌉ a round cuts the sorted positions into, and the number of chunks."""
    c = -(-n // n_buckets)
    return c, -(-n // c)


def reformer_scores_count(n: int, n_buckets: int, n_rounds: int) -> int:
    """The scores reformer_attention computes for n tokens: per round, nc chunks of c queries × 2c keys."""
    c, nc = chunks(n, n_buckets)
    return n_rounds * nc * c * 2 * c


def _one_round(q: torch.Tensor, keys: torch.Tensor, v: torch.Tensor, buckets: torch.Tensor, r: int, b: int):
    """One hashing round -> (output (..., n, d_v), log-sum-exp of each query's scores (..., n))."""
    n = q.shape[-2]
    c, nc = chunks(n, b)  # chunk length, number of chunks
    n_pad = nc * c
    positions = torch.arange(n, device=q.device)
    order = torch.argsort(buckets[r] * n + positions, dim=-1)  # sort by bucket, then position  (..., n)

    def sort(x: torch.Tensor) -> torch.Tensor:  # (..., n, f) -> (..., n_pad, f) in sorted order, zero padded
        gathered = x.expand(*order.shape, x.shape[-1]).gather(-2, order.unsqueeze(-1).expand(*order.shape, x.shape[-1]))
        return torch.nn.functional.pad(gathered, (0, 0, 0, n_pad - n))

    pos = torch.nn.functional.pad(order, (0, n_pad - n), value=-1)  # original position of each sorted slot (..., n_pad)
    q_c = sort(q).unflatten(-2, (nc, c))  # (..., nc, c, d)
    k_c = sort(keys).unflatten(-2, (nc, c))
    v_c = sort(v).unflatten(-2, (nc, c))  # (..., nc, c, d_v)
    pos_c = pos.unflatten(-1, (nc, c))  # (..., nc, c)
    # keys of chunk t: chunk t − 1 then chunk t (chunk 0 looks back at padding, masked below)
    k_look = torch.cat([_previous(k_c, 0.0), k_c], dim=-2)  # (..., nc, 2c, d)
    v_look = torch.cat([_previous(v_c, 0.0), v_c], dim=-2)  # (..., nc, 2c, d_v)
    pos_look = torch.cat([_previous(pos_c.unsqueeze(-1), -1).squeeze(-1), pos_c], dim=-1)  # (..., nc, 2c)
    scores = q_c @ k_look.transpose(-2, -1)  # (..., nc, c, 2c)
    # allowed: a real key in the same bucket as the query (this round's hash)
    same = _bucket_at(buckets[r], pos_c).unsqueeze(-1) == _bucket_at(buckets[r], pos_look).unsqueeze(-2)  # (..., nc, c, 2c)
    allowed = same & (pos_look >= 0).unsqueeze(-2) & (pos_c >= 0).unsqueeze(-1)
    # a pair whose hashes agree in several rounds would be counted once per round: divide it out
    agree = torch.zeros_like(scores)
    for other in buckets:
        agree += (_bucket_at(other, pos_c).unsqueeze(-1) == _bucket_at(other, pos_look).unsqueeze(-2)).to(scores.dtype)
    scores = (scores - agree.clamp_min(1).log()).masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)  # (..., nc, c, 1): every real query sees itself
    out_sorted = torch.exp(scores - lse) @ v_look  # (..., nc, c, d_v)
    out_sorted = out_sorted.flatten(-3, -2)[..., :n, :]  # (..., n, d_v)
    lse_sorted = lse.flatten(-3, -1)[..., :n]  # (..., n)
    undo = torch.argsort(order, dim=-1)  # sorted slot of each original position
    out = out_sorted.gather(-2, undo.unsqueeze(-1).expand(*undo.shape, out_sorted.shape[-1]))
    return out, lse_sorted.gather(-1, undo)


def _previous(x: torch.Tensor, fill: float) -> torch.Tensor:
    """Chunk t − 1 for every chunk t along dim −3 of (..., nc, c, f); chunk 0 gets a chunk of `fill`."""
    pad = torch.full_like(x[..., :1, :, :], fill)
    return torch.cat([pad, x[..., :-1, :, :]], dim=-3)


def _bucket_at(bucket: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """bucket (..., n) read at positions pos (..., nc, L) -> (..., nc, L); padding slots (−1) read position 0."""
    flat = pos.clamp_min(0).flatten(-2)  # (..., nc·L)
    return bucket.expand(*flat.shape[:-1], bucket.shape[-1]).gather(-1, flat).view(pos.shape)
