"""Find the head: every layer × head ranked by the weight one query token gives one key token.

Convention: attentions are (n_layers, n_heads, n_query, n_key) weights after softmax (rows sum to 1, or are all
zero for a row the mask forbids entirely), as `RunResult.attentions` holds them for the run's mask and scale.

    pair_weight[l, h] = A[l, h, query, key]

A head "looks from it to animal" when that weight is large; against an even spread over the keys the mask
leaves the query, 1 / (allowed keys), it is large when it is many times that. But a head can give a key much
weight from every query (a "column" head: the key's column of the pattern is bright); its weight from this query
then says nothing about this query. So beside each weight stands what the other queries give the same key:

    others[l, h] = mean over queries q' ≠ query that the mask lets see key of A[l, h, q', key]

and a head is a column head for the pair when others ≥ COLUMN_SHARE × pair_weight.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError


@dataclass(frozen=True)
class HeadWeight:
    rank: int  # 1 = the head that gives the pair the most weight
    layer: int
    head: int
    weight: float  # A[layer, head, query, key], after softmax
    others: float | None = None  # mean of A[layer, head, q', key] over the other queries q' that may see key; None: none may

    @property
    def column(self) -> bool:
        """A column head for this pair: the other queries give the key at least COLUMN_SHARE of this query's weight
        on average, so the weight is about the key, not about this query."""
        return self.others is not None and self.weight > 0 and self.others >= COLUMN_SHARE * self.weight


COLUMN_SHARE = 0.5  # others' mean ≥ half this query's weight: the key draws nearly as much from everywhere


def check_token(index: int, n: int, what: str) -> int:
    """index as an int inside 0 .. n - 1, else an AttnvizError that names the text's range."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise AttnvizError(f"The {what} token must be a position (a whole number), not {index!r}.")
    if not 0 <= index < n:
        raise AttnvizError(f"There is no {what} token at position {index}: this text has {n} tokens, "
                           f"positions 0 to {n - 1}.")
    return index


def same_token_position(old_labels: list[str], old_index: int, new_labels: list[str]) -> int | None:
    """Where the token at old_labels[old_index] is in a new text: the same occurrence of the same token text ("the"
    the second time stays the second "the"), else its first occurrence, else None (the new text lacks it).
    Compared as written, then without case."""
    token = old_labels[old_index]
    for same in (lambda a, b: a == b, lambda a, b: a.strip().lower() == b.strip().lower()):
        before = sum(same(label, token) for label in old_labels[:old_index])  # occurrences before it in the old text
        found = [i for i, label in enumerate(new_labels) if same(label, token)]
        if found:
            return found[min(before, len(found) - 1)]
    return None


def pair_weights(attentions: torch.Tensor, query_index: int, key_index: int) -> torch.Tensor:
    """(L, H, n, n) weights -> (L, H): the weight each head gives from the query token to the key token."""
    n = attentions.shape[-1]
    q, k = check_token(query_index, n, "query"), check_token(key_index, n, "key")
    return attentions[:, :, q, k].float()  # (L, H)


def others_weights(attentions: torch.Tensor, query_index: int, key_index: int, mask: torch.Tensor | None = None
                   ) -> torch.Tensor | None:
    """(L, H, n, n) weights -> (L, H): the mean weight the other queries give the key token, over the queries q' ≠
    query_index that the mask (n, n) bool, True = may attend, lets see it; None when no other query may."""
    n = attentions.shape[-1]
    q, k = check_token(query_index, n, "query"), check_token(key_index, n, "key")
    others = torch.ones(n, dtype=torch.bool)  # (n,) the queries that count
    others[q] = False
    if mask is not None:
        others &= mask[:, k].to(torch.bool).cpu()
    count = int(others.sum())
    if count == 0:
        return None
    column = attentions[:, :, :, k].float()  # (L, H, n): what every query gives the key
    return column[:, :, others].sum(dim=-1) / count  # (L, H) mean over the other queries


def rank_heads_for_pair(res, query_index: int, key_index: int) -> list[HeadWeight]:
    """Every (layer, head) of a run, ranked by the weight its query token `query_index` gives key token `key_index`,
    each with the mean weight the other queries give that key (others_weights).

    res: a RunResult (its attentions are for the run's own mask and scale). Largest weight first; equal weights
    in (layer, head) order, so the ranking is the same on every run.
    """
    weights = pair_weights(res.attentions, query_index, key_index)
    others = others_weights(res.attentions, query_index, key_index, getattr(res, "mask", None))
    n_heads = weights.shape[1]
    flat = weights.flatten().tolist()
    flat_others = [None] * len(flat) if others is None else others.flatten().tolist()
    order = sorted(range(len(flat)), key=lambda f: (-flat[f], f))
    return [HeadWeight(rank, *divmod(f, n_heads), flat[f], flat_others[f]) for rank, f in enumerate(order, start=1)]


def allowed_keys(res, query_index: int) -> int:
    """How many keys the run's mask lets this query see (all n without a mask)."""
    n = len(res.tokens)
    check_token(query_index, n, "query")
    if res.mask is None:
        return n
    return int(res.mask[query_index].sum())


def token_position(reference, labels: list[str], what: str) -> int:
    """A token named in a link -> its position. Accepted: a position ("10"), the picker's own spelling
    ("it (10)", "10: it"), or a token's text ("it": its first occurrence, compared without case).
    AttnvizError when the text has no such token."""
    text = str(reference).strip()
    n = len(labels)
    spelled = re.fullmatch(r"(?:(-?\d+)\s*:.*|.*\((-?\d+)\)|(-?\d+))", text, flags=re.DOTALL)
    if spelled:
        return check_token(int(next(g for g in spelled.groups() if g is not None)), n, what)
    lowered = [label.strip().lower() for label in labels]
    if text.lower() in lowered:
        return lowered.index(text.lower())
    shown = ", ".join(f"{label} ({i})" for i, label in enumerate(labels[:40])) + (" …" if n > 40 else "")
    raise AttnvizError(f"“{text}” is not a token of this text, so it cannot be the {what} token. "
                       f"Its tokens are: {shown}.")
