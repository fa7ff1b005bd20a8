"""What attnviz.show and attnviz.save_html accept, checked and brought to one shape: a list of AttentionSet.

Accepted:
    a RunResult (model.run(text, ...)): its self-attention; with keep=True also its scores Q Kᵀ, so a click can
        show the softmax arithmetic of a cell
    a Seq2SeqResult (model.run(source, target=...)): the decoder's cross-attention (target × source) first, then
        the decoder's and the encoder's self-attention
    raw attention from any library, as bertviz takes it: a tensor or array (layers, heads, n_q, n_k), or a list of
        per-layer (1, heads, n_q, n_k) tensors (transformers' `output_attentions`), with tokens (and key_tokens
        where the keys are other tokens, a cross-attention)

Bad input is an AttnvizError that says what was wrong and where: a shape that is no attention, a batch of more
than one sequence, a token list of the wrong length, NaN or ±inf, a value outside 0..1. A raw row that does not
sum to 1 (or 0, a row a mask forbids entirely) is drawn, with a warning (AttnvizWarning): it may be a pattern
on purpose (a rollout, an average), but it is then no softmax's output, and the click panel prints its sum.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from attnviz.errors import AttnvizError

ROW_SUM_TOLERANCE = 1e-3  # a float32 softmax row over 4096 keys sums to 1 within ~1e-5; anything further is not one
WEIGHT_TOLERANCE = 1e-4  # a weight this far outside 0..1 is no rounding error


class AttnvizWarning(UserWarning):
    """Something attnviz draws anyway but you should know (a raw attention whose rows do not sum to 1)."""


@dataclass(frozen=True)
class AttentionSet:
    """One kind of attention of a run, every layer: what the views draw, and what a click's arithmetic needs."""

    name: str  # "self-attention", "cross-attention (decoder → encoder)", ...
    weights: torch.Tensor  # (layers, heads, n_q, n_k) float32, rows sum to 1 (0 for a fully masked row)
    row_labels: list[str]  # the query tokens (n_q)
    col_labels: list[str]  # the key tokens (n_k)
    scores: list[torch.Tensor] | None = None  # per layer Q Kᵀ unscaled (heads, n_q, n_k), when the run kept them
    allowed: torch.Tensor | None = None  # bool (n_q, n_k): True = may attend (the run's mask), None = every pair
    scale: float | None = None  # the factor on Q Kᵀ in every layer
    d_head: int | None = None
    no_scores: str = ""  # why there are no scores (shown where the arithmetic would be)

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]


def attention_sets(obj, tokens=None, key_tokens=None) -> list[AttentionSet]:
    """obj (a run result or raw attention, see the module text) -> its AttentionSets, the one drawn first first."""
    from attnviz.engine.models.model import RunResult

    if isinstance(obj, RunResult):
        if tokens is not None or key_tokens is not None:
            raise AttnvizError("A run result carries its own tokens: pass tokens= only with a raw attention tensor.")
        return sets_of_run(obj)
    return [raw_set(obj, tokens, key_tokens)]


NO_SCORES_RUN = ("This run kept no scores: run it with keep=True (model.run(text, keep=True)) and the click shows "
                 "q·k, the scale, the mask and the softmax of the row.")
NO_SCORES_PAIR = "A run with a target (model.run(source, target=...)) keeps no scores, only the weights."
NO_SCORES_RAW = ("Only weights were given. The scores before the softmax cannot be recovered from them: adding one "
                 "number to a whole row of scores gives the same weights.")


def sets_of_run(res) -> list[AttentionSet]:
    """A RunResult's self-attention (with its scores when it kept them); a Seq2SeqResult's three attentions."""
    cross = getattr(res, "cross_attentions", None)
    if cross is not None:
        source, target = list(res.source_labels), list(res.labels)
        return [
            AttentionSet("cross-attention (decoder queries → encoder keys)", cross.float(), target, source,
                         no_scores=NO_SCORES_PAIR),
            AttentionSet("decoder self-attention (causal)", res.attentions.float(), target, target,
                         no_scores=NO_SCORES_PAIR),
            AttentionSet("encoder self-attention", res.encoder_attentions.float(), source, source,
                         no_scores=NO_SCORES_PAIR),
        ]
    labels = list(res.labels)
    if not res.traces:
        return [AttentionSet("self-attention", res.attentions.float(), labels, labels, no_scores=NO_SCORES_RUN)]
    n = len(labels)
    scores = [t.scores[0].float() for t in res.traces]  # Q Kᵀ per layer, recomputed from the kept q, k (nh, T, T)
    allowed = None
    if res.mask is not None:
        allowed = torch.broadcast_to(res.mask.bool().cpu(), (n, n)).clone()  # (T, T): the same in every layer
    return [AttentionSet("self-attention", res.attentions.float(), labels, labels, scores=scores, allowed=allowed,
                         scale=float(res.scale), d_head=int(res.traces[0].q.shape[-1]))]


def as_float_tensor(a, what: str) -> torch.Tensor:
    """A tensor or array-like -> a float32 CPU tensor (a clear error for anything else)."""
    if isinstance(a, torch.Tensor):
        return a.detach().to("cpu", torch.float32)
    try:
        array = np.asarray(a, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise AttnvizError(f"{what} must be a tensor or an array of numbers, not {type(a).__name__}.") from err
    return torch.from_numpy(array)


def stacked_layers(attention) -> torch.Tensor:
    """Raw attention in any of the accepted shapes -> (layers, heads, n_q, n_k) float32."""
    if isinstance(attention, (list, tuple)) and attention and not isinstance(attention[0], (int, float)):
        layers = [as_float_tensor(a, f"layer {i}") for i, a in enumerate(attention)]
        for i, a in enumerate(layers):
            if a.dim() == 4 and a.shape[0] != 1:
                raise AttnvizError(f"Layer {i} holds a batch of {a.shape[0]} sequences (shape {tuple(a.shape)}): "
                                   "pass one, e.g. [a[i:i+1] for a in attention].")
            if a.dim() not in (3, 4):
                raise AttnvizError(f"Layer {i} has shape {tuple(a.shape)}; each layer must be (1, heads, n_q, n_k) "
                                   "or (heads, n_q, n_k).")
        shapes = {tuple(a.shape[-3:]) for a in layers}
        if len(shapes) > 1:
            raise AttnvizError(f"The layers have different shapes: {sorted(shapes)}. Every layer must be "
                               "(1, heads, n_q, n_k) with the same heads and tokens.")
        return torch.stack([a.reshape(a.shape[-3:]) for a in layers])  # (L, H, n_q, n_k)
    a = as_float_tensor(attention, "attention")
    if a.dim() == 5:
        if a.shape[1] != 1:
            raise AttnvizError(f"attention has shape {tuple(a.shape)}: a batch of {a.shape[1]} sequences. Pass one "
                               "sequence, (layers, heads, n_q, n_k).")
        a = a[:, 0]  # (L, H, n_q, n_k)
    if a.dim() == 3:
        a = a[None]  # one layer (1, H, n_q, n_k)
    if a.dim() == 2:
        a = a[None, None]  # one head of one layer (1, 1, n_q, n_k)
    if a.dim() != 4 or 0 in a.shape:
        raise AttnvizError(f"attention must be (layers, heads, n_q, n_k), or a list of per-layer (1, heads, n_q, n_k) "
                           f"tensors; got shape {tuple(a.shape)}.")
    return a


def checked_labels(tokens, n: int, what: str) -> list[str]:
    """tokens as n strings; None -> the positions '0' … 'n−1'."""
    if tokens is None:
        return [str(i) for i in range(n)]
    if isinstance(tokens, str):
        raise AttnvizError(f"{what} must be a list of tokens, one per position, not one string.")
    labels = [str(t) for t in tokens]
    if len(labels) != n:
        raise AttnvizError(f"There are {len(labels)} {what} but the attention has {n} "
                           f"{'queries' if what == 'tokens' else 'keys'} (shape …, {n}).")
    return labels


def check_weights(a: torch.Tensor) -> None:
    """Finite, within 0..1 (an AttnvizError naming the first bad cell); rows that sum to neither 1 nor 0 warned about."""
    bad = ~torch.isfinite(a)
    if bad.any():
        layer, head, row, col = (int(i) for i in bad.nonzero()[0])
        raise AttnvizError(f"attention holds {a[layer, head, row, col].item()} at layer {layer}, head {head}, query "
                           f"{row}, key {col}: weights after a softmax are finite numbers from 0 to 1.")
    outside = (a < -WEIGHT_TOLERANCE) | (a > 1 + WEIGHT_TOLERANCE)
    if outside.any():
        layer, head, row, col = (int(i) for i in outside.nonzero()[0])
        raise AttnvizError(f"attention holds {a[layer, head, row, col].item():g} at layer {layer}, head {head}, query "
                           f"{row}, key {col}: weights after a softmax lie from 0 to 1. Scores before the softmax "
                           "are not weights.")
    sums = a.double().sum(-1)  # (L, H, n_q)
    odd = ((sums - 1).abs() > ROW_SUM_TOLERANCE) & (sums.abs() > ROW_SUM_TOLERANCE)
    if odd.any():
        layer, head, row = (int(i) for i in odd.nonzero()[0])
        warnings.warn(f"{int(odd.sum())} of {odd.numel()} attention rows do not sum to 1 (the first: layer {layer}, "
                      f"head {head}, query {row} sums to {sums[layer, head, row].item():.4g}). They are drawn on the "
                      "weights' 0..1 scale as they are; a softmax's rows sum to 1.", AttnvizWarning, stacklevel=4)


def raw_set(attention, tokens, key_tokens) -> AttentionSet:
    """Raw attention and its tokens -> one checked AttentionSet with no scores."""
    a = stacked_layers(attention)
    _, _, n_q, n_k = a.shape
    rows = checked_labels(tokens, n_q, "tokens")
    if key_tokens is None and n_k != n_q:
        raise AttnvizError(f"The attention has {n_q} queries but {n_k} keys (a cross-attention): pass key_tokens= "
                           "for the keys as well as tokens= for the queries.")
    cols = rows if key_tokens is None else checked_labels(key_tokens, n_k, "key_tokens")
    check_weights(a)
    name = "attention" if key_tokens is None else "cross-attention (queries → keys)"
    return AttentionSet(name, a.contiguous(), rows, cols, no_scores=NO_SCORES_RAW)


def chosen(which, count: int, what: str) -> list[int]:
    """layer= / heads= (None = all, an int, or a list of ints) -> the indices, each checked against count."""
    if which is None:
        return list(range(count))
    items = [which] if isinstance(which, (int, np.integer)) else list(which) if isinstance(which, (list, tuple, range)) \
        else None
    if items is None or not items or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items):
        raise AttnvizError(f"{what} must be None (all), a whole number or a list of them, not {which!r}.")
    for i in items:
        if not 0 <= i < count:
            raise AttnvizError(f"There is no {what} {i}: this attention has {count} {what}s, 0 to {count - 1}.")
    if len(set(items)) != len(items):
        raise AttnvizError(f"{what} {items} names one {what} twice.")
    return [int(i) for i in items]


def scale_name(scale: float, d_head: int | None) -> str:
    """The factor on the scores as a class writes it: 1/√32, 1 (unscaled) or the number."""
    if d_head and math.isclose(scale, 1.0 / math.sqrt(d_head), rel_tol=1e-6):
        return f"1/√{d_head}"
    return "1 (unscaled)" if scale == 1.0 else f"{scale:.6g}"
