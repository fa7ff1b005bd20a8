"""Scores that name what a head does: previous-token heads and induction heads, per layer × head.

Convention: attentions are (n_layers, n_heads, n_query, n_key) weights after softmax (rows sum to 1),
as `RunResult.attentions` holds them. A score is a mean of weights on one diagonal stripe:

    stripe(offset)[l, h] = mean over chosen queries q of  A[l, h, q, q - offset]

- previous-token score: offset 1, every query that has a previous token (q = 1 .. n-1).
  A head that always looks one step back scores 1; one that spreads evenly over n keys, 1/n.
- induction score, on a sequence whose body repeats with period P (e.g. [BOS] a b c d a b c d, P = 4):
  a query q in the second copy saw the same token at q - P; the token right after that earlier
  occurrence sits at q - P + 1, so the offset is P - 1, over the queries of the second copy.
"""

from __future__ import annotations

import torch

from attnviz.errors import AttnvizError


def stripe_score(attentions: torch.Tensor, offset: int, queries: range) -> torch.Tensor:
    """(..., n, n) weights -> (...) mean of A[..., q, q - offset] over q in `queries`."""
    n = attentions.shape[-1]
    qs = [q for q in queries if 0 <= q < n and 0 <= q - offset < n]
    if not qs:
        raise AttnvizError(f"No query in {n} tokens has a key {offset} positions back: use a longer sequence.")
    q = torch.tensor(qs)
    return attentions[..., q, q - offset].float().mean(dim=-1)  # (...)


def previous_token_scores(attentions: torch.Tensor) -> torch.Tensor:
    """(L, H, n, n) -> (L, H): mean weight each query gives to the token just before it."""
    n = attentions.shape[-1]
    return stripe_score(attentions, 1, range(1, n))


def induction_scores(attentions: torch.Tensor, period: int, first: int = 1) -> torch.Tensor:
    """(L, H, n, n) -> (L, H): mean weight from each token of the second copy to the token after its first occurrence.

    period: the length P of the repeated block; first: where the first copy starts (1 after [BOS]).
    The queries are the second copy, positions first + P .. first + 2P - 1.
    """
    n = attentions.shape[-1]
    if period < 1 or first + 2 * period > n:
        raise AttnvizError(f"A block of {period} tokens repeated twice from position {first} does not fit in {n} tokens.")
    return stripe_score(attentions, period - 1, range(first + period, first + 2 * period))


def repeat_period(ids: list[int]) -> tuple[int, int] | None:
    """(period, first) if ids look like [prefix] A A with A at least 2 tokens long, else None.

    Used to score the user's own text: the longest block repeated right after itself at the end.
    """
    n = len(ids)
    for period in range((n - 0) // 2, 1, -1):
        first = n - 2 * period
        if ids[first:first + period] == ids[first + period:]:
            return period, first
    return None


def best_head(scores: torch.Tensor) -> tuple[int, int]:
    """(layer, head) of the highest score in an (L, H) map."""
    flat = int(scores.flatten().argmax())
    return divmod(flat, scores.shape[1])


def per_token_loss(logits: torch.Tensor, ids: list[int] | torch.Tensor) -> torch.Tensor:
    """(n, V) next-token logits and the n ids -> (n - 1,) cross-entropy in nats of predicting ids[1:].

    loss[p] = -log softmax(logits[p])[ids[p + 1]]: how surprised the model is by token p + 1.
    """
    ids = torch.as_tensor(ids, dtype=torch.long)
    if logits.shape[0] != ids.shape[0] or ids.shape[0] < 2:
        raise AttnvizError("Per-token loss needs one row of logits per token and at least two tokens.")
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (n, V)
    return -log_probs[:-1].gather(1, ids[1:, None])[:, 0]  # (n - 1,)
