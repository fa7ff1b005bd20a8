"""Summary numbers of attention patterns. Patterns are [..., query_pos, key_pos], rows sum to 1
(or are all zero for a query whose mask forbade every key)."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.errors import AttnvizError


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """H(row) = -Σ_j a_j log a_j in nats, per query row: (..., n_q, n_k) -> (..., n_q).

    0 means all weight on one key (saturated); log(n_k) means spread evenly. 0·log 0 counts as 0.
    """
    # numpy's log is vectorised on this CPU build and torch's is not: 13 vs 82 ms for a model view's 6 × 12 heads
    # of 512 tokens (torch's xlogy took 154 ms). Patterns on a GPU come over to the CPU for it and go back.
    a = weights.detach().cpu().numpy()
    log_a = np.maximum(a, np.finfo(a.dtype).tiny)  # finite where a = 0, so 0·log 0 counts as 0 exactly
    np.log(log_a, out=log_a)
    return torch.from_numpy(-np.einsum("...j,...j->...", a, log_a)).to(weights.device)  # Σ_j a_j log a_j (..., n_q)


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


# ---- where a head looks: distance, sinks, self, previous token --------------------------------

SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "<s>", "</s>", "<|endoftext|>"})

KL_EPSILON = 1e-12  # an optional floor for q in KL(p || q) (a capped KL); see `row_kl_divergence`


def _row_distances(weights: torch.Tensor) -> torch.Tensor:
    """|i - j| for every (query i, key j) cell: (n_q, n_k), same dtype and device as the weights."""
    n_q, n_k = weights.shape[-2:]
    i = torch.arange(n_q, device=weights.device).unsqueeze(1)  # query positions (n_q, 1)
    j = torch.arange(n_k, device=weights.device).unsqueeze(0)  # key positions   (1, n_k)
    return (i - j).abs().to(weights.dtype)  # (n_q, n_k)


def _check_square(weights: torch.Tensor, what: str) -> None:
    if weights.dim() < 2 or weights.shape[-1] != weights.shape[-2]:
        raise AttnvizError(f"{what} needs square patterns (..., n, n), got shape {tuple(weights.shape)}.")


def mean_attention_distance(weights: torch.Tensor) -> torch.Tensor:
    """d = mean over live rows i of Σ_j a_ij |i - j|, in positions: (..., n_q, n_k) -> (...).

    0 = every token looks at itself; large = the head gathers from far away (a "global" head).
    """
    per_row = (weights * _row_distances(weights)).sum(-1)  # expected distance of each query (..., n_q)
    return mean_over_live_rows(per_row, weights)


def share_to_positions(weights: torch.Tensor, positions, first_row: int = 0) -> torch.Tensor:
    """mean over live rows i ≥ first_row of Σ_{j ∈ positions} a_ij: (..., n_q, n_k) -> (...), in [0, 1].

    With positions = [CLS]/[SEP]/first token this measures "attention sinks": heads that park
    their weight on a token that carries little meaning when they have nothing better to do.
    first_row: 1 to average over the same rows as previous_token_share (see head_statistics).
    """
    n_k = weights.shape[-1]
    keys = sorted({int(p) for p in positions})  # a position named twice must not count twice
    if any(not 0 <= p < n_k for p in keys):
        raise AttnvizError(f"Key positions must lie between 0 and {n_k - 1}, got {keys}.")
    index = torch.tensor(keys, dtype=torch.long, device=weights.device)
    rows = weights[..., first_row:, :]  # (..., n_q - first_row, n_k)
    per_row = rows.index_select(-1, index).sum(-1)  # weight each query puts on those keys (..., n_q - first_row)
    return mean_over_live_rows(per_row, rows)


def self_share(weights: torch.Tensor, first_row: int = 0) -> torch.Tensor:
    """mean over live rows i ≥ first_row of a_ii, the weight a token puts on itself: (..., n, n) -> (...).

    first_row: 1 to average over the same rows as previous_token_share, so that the two shares add up to at
    most 1 (with row 0 in one mean and not the other, a causal previous-token head read 1/n + 1).
    """
    _check_square(weights, "self_share")
    rows = weights[..., first_row:, :]  # (..., n - first_row, n)
    diagonal = rows.diagonal(offset=first_row, dim1=-2, dim2=-1)  # a_ii for i = first_row..n-1 (..., n - first_row)
    return mean_over_live_rows(diagonal, rows)


def previous_token_share(weights: torch.Tensor) -> torch.Tensor:
    """mean over live rows i ≥ 1 of a_{i,i-1}, the weight on the token just before: (..., n, n) -> (...).

    Row 0 has no previous token, so it is left out rather than counted as 0.
    """
    _check_square(weights, "previous_token_share")
    sub_diagonal = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # a_{i,i-1} for i = 1..n-1 (..., n-1)
    return mean_over_live_rows(sub_diagonal, weights[..., 1:, :])


def row_kl_divergence(p: torch.Tensor, q: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    """KL(p || q) = Σ_j p_j log(p_j / q_j) in nats, per query row: (..., n_q, n_k) x2 -> (..., n_q).

    The truth, never NaN:
      - terms with p_j = 0 count as 0 (the limit of p log p);
      - a key that p uses (p_j > 0) and q gives zero weight (q_j = 0, e.g. a key q's mask forbids)
        makes the row's KL +inf: q calls certain what p does. No floor turns that into a fake finite number;
      - a row that is all zeros in p or in q (a fully masked query) is not a distribution: its KL is 0.
        Tell those rows apart with `live_rows`.
    eps: None = exact; a float floors q at eps before the log (a capped KL, at most log(1/eps) per row).
    Computed in float64 (tiny weights lose their logs in float32), returned in p's dtype.
    """
    if p.shape != q.shape:
        raise AttnvizError(f"KL needs two patterns of the same shape, got {tuple(p.shape)} and {tuple(q.shape)}.")
    p64, q64 = p.double(), q.double()
    if eps is not None:
        q64 = q64.clamp(min=eps)
    with torch.no_grad():
        log_ratio = (p64 / q64).log()  # log(p_j / q_j): +inf where q_j = 0 < p_j, -inf or NaN where p_j = 0
    terms = torch.where(p64 > 0, p64 * log_ratio, torch.zeros_like(p64))  # 0 · log 0 counts as 0  (..., n_q, n_k)
    kl = terms.sum(-1).clamp(min=0.0)  # rounding can dip a hair below 0; KL never does; +inf stays +inf
    both_live = live_rows(p) & live_rows(q)
    return torch.where(both_live, kl, torch.zeros_like(kl)).to(p.dtype)


def infinite_rows(row_kl: torch.Tensor) -> torch.Tensor:
    """bool (..., n_q): rows whose KL is infinite (q gives zero weight to a key p uses)."""
    return torch.isinf(row_kl)


SHARES_FROM_ROW = 1  # head_statistics' shares skip query row 0, which has no previous token (see there)


def head_statistics(attentions: torch.Tensor, tokens: list[str]) -> list[dict]:
    """One row per (layer, head) of a run's attentions (L, H, n, n), for a table. Plain Python numbers.

    Columns: layer, head, entropy (nats), max_weight, mean_distance (positions), to_cls_sep_first
    (share to [CLS]/[SEP]/<s>/</s>/<|endoftext|> or position 0), to_self, to_previous.
    The three shares are means over the same query rows, 1 .. n-1 (row 0 has no previous token), so to_self +
    to_previous never exceeds 1; the other statistics are over every (live) row.
    """
    if attentions.dim() != 4 or attentions.shape[-1] != attentions.shape[-2]:
        raise AttnvizError(f"Expected attentions of shape (layers, heads, n, n), got {tuple(attentions.shape)}.")
    n = attentions.shape[-1]
    if len(tokens) != n:
        raise AttnvizError(f"There are {len(tokens)} tokens but the patterns are {n}×{n}.")
    sinks = [0] + [j for j, tok in enumerate(tokens) if tok in SPECIAL_TOKENS]
    statistics = {
        "entropy": head_entropy,
        "max_weight": head_max_weight,
        "mean_distance": mean_attention_distance,
        "to_cls_sep_first": lambda w: share_to_positions(w, sinks, first_row=SHARES_FROM_ROW),
        "to_self": lambda w: self_share(w, first_row=SHARES_FROM_ROW),
        "to_previous": previous_token_share,
    }
    # layer by layer: a whole run's temporaries (6 × 12 × 512² floats, 75 MB each) are fresh memory every time,
    # and faulting it in cost more than the arithmetic; one layer's fit in memory the allocator reuses
    columns = {name: torch.stack([of(layer) for layer in attentions]).tolist() for name, of in statistics.items()}  # (L, H)
    n_layers, n_heads = attentions.shape[:2]
    return [
        {"layer": layer, "head": head, **{name: float(values[layer][head]) for name, values in columns.items()}}
        for layer in range(n_layers)
        for head in range(n_heads)
    ]
