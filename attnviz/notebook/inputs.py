"""What attnviz.show and attnviz.save_html accept, checked and brought to one shape: a list of AttentionSet.

Accepted:
    a RunResult (model.run(text, ...)): its self-attention; with keep=True also its scores Q Kᵀ, so a click can
        show the softmax arithmetic of a cell
    a Seq2SeqResult (model.run(source, target=...)): the decoder's cross-attention (target × source) first, then
        the decoder's and the encoder's self-attention
    raw attention from any library, as bertviz takes it: a tensor or array (layers, heads, n_q, n_k), or a list of
        per-layer (1, heads, n_q, n_k) tensors (transformers' `output_attentions`), with tokens (and key_tokens
        where the keys are other tokens, a cross-attention)
    an encoder–decoder's attentions in one call, as bertviz's model_view takes them: encoder_attentions=,
        decoder_attentions=, cross_attentions= (any of them; bertviz's singular names too), with encoder_tokens= and
        decoder_tokens=
    a transformers model's output as it comes (a ModelOutput run with output_attentions=True): its `attentions`,
        or an encoder–decoder's three (Seq2SeqLMOutput, Seq2SeqModelOutput, ...)

Bad input is an AttnvizError that says what was wrong and where: a shape that is no attention, a batch of more
than one sequence, a token list of the wrong length, NaN or ±inf, a value outside 0..1. A raw row that does not
sum to 1 (or 0, a row a mask forbids entirely) is drawn, with a warning (AttnvizWarning): it may be a pattern
on purpose (a rollout, an average), but it is then no softmax's output, and the click panel prints its sum.
bfloat16 and float16 weights are checked with a tolerance fit for their precision (a bf16 weight near 1 is off by up
to 2⁻⁹). Empty attentions (what transformers returns with its default SDPA attention) say how to get real ones.
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from attnviz.engine.models.model import RunResult
from attnviz.engine.models.seq2seq import Seq2SeqResult
from attnviz.errors import AttnvizError

ROW_SUM_TOLERANCE = 1e-3  # a float32 softmax row over 4096 keys sums to 1 within ~1e-5; anything further is not one
WEIGHT_TOLERANCE = 1e-4  # a weight this far outside 0..1 is no rounding error
# A weight stored in a half type is rounded by up to eps/2 of itself, so a row of them sums to 1 within eps/2: the
# tolerance is twice eps (bfloat16: 2⁻⁶ ≈ 0.016, float16: 2⁻⁹ ≈ 0.002), never below float32's.
HALF_TYPES = (torch.bfloat16, torch.float16)
EAGER = ('load the model with attn_implementation="eager", e.g. AutoModel.from_pretrained(name, '
         'attn_implementation="eager"), and call it with output_attentions=True')
EMPTY_ATTENTIONS = ("The attentions are empty: transformers returns no attention weights from its default attention "
                    f"(SDPA, flash). To get them, {EAGER}.")
ENCODER_DECODER_FIELDS = ("encoder_attentions", "decoder_attentions", "cross_attentions")


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


@dataclass(frozen=True)
class Drawn:
    """What a widget or a saved file draws, from one input: its attention sets and what the title says of them."""

    sets: list[AttentionSet]  # the one drawn first first
    name: str  # the model's name, or what was given ("attention", "Seq2SeqLMOutput")
    counts: str  # "5 tokens", "7 source tokens → 4 target tokens (decoder input)"
    notes: list[str]  # what the run says the user should know


def drawn_input(obj=None, tokens=None, key_tokens=None, *, encoder_attentions=None, decoder_attentions=None,
                cross_attentions=None, encoder_tokens=None, decoder_tokens=None) -> Drawn:
    """obj (a run result, raw attention or a transformers output, see the module text), or an encoder–decoder's
    attentions by name -> what is drawn."""
    pair = {"encoder_attentions": encoder_attentions, "decoder_attentions": decoder_attentions,
            "cross_attentions": cross_attentions}
    pair_tokens = encoder_tokens is not None or decoder_tokens is not None
    if any(a is not None for a in pair.values()):
        if obj is not None:
            raise AttnvizError("Pass either one attention (or a run result, or a model's output) or an "
                               "encoder–decoder's encoder_attentions=, decoder_attentions=, cross_attentions=, not both.")
        if tokens is not None or key_tokens is not None:
            raise AttnvizError("With an encoder–decoder's attentions, name the tokens with encoder_tokens= (the source) "
                               "and decoder_tokens= (the target), not tokens=/key_tokens=.")
        return encoder_decoder_input(pair, encoder_tokens, decoder_tokens, "attention")
    if obj is None:
        raise AttnvizError("Nothing to draw: pass a run result (model.run(...)), an attention tensor, a transformers "
                           "model's output, or an encoder–decoder's encoder_attentions=, decoder_attentions=, "
                           "cross_attentions=.")
    output_type = transformers_output_type()
    if output_type is not None and isinstance(obj, output_type):
        return transformers_output_input(obj, tokens, key_tokens, encoder_tokens, decoder_tokens)
    if pair_tokens:
        raise AttnvizError("encoder_tokens= and decoder_tokens= go with an encoder–decoder's attentions "
                           "(encoder_attentions=, decoder_attentions=, cross_attentions=) or a seq2seq model's output.")
    if isinstance(obj, RunResult):
        if tokens is not None or key_tokens is not None:
            raise AttnvizError("A run result carries its own tokens: pass tokens= only with a raw attention tensor.")
        return run_input(obj)
    raw = raw_set(obj, tokens, key_tokens)
    return Drawn([raw], "attention", f"{len(raw.row_labels)} tokens", [])


def transformers_output_type() -> type | None:
    """transformers' ModelOutput when transformers is loaded (an output of it can exist only then), else None: a
    plain tensor never makes attnviz import transformers (seconds)."""
    if "transformers" not in sys.modules:
        return None
    from transformers.utils import ModelOutput  # noqa: PLC0415 - optional; loaded already by whoever made the output

    return ModelOutput


def transformers_output_input(out, tokens, key_tokens, encoder_tokens, decoder_tokens) -> Drawn:
    """A transformers ModelOutput: an encoder–decoder's three attentions when its class has them (Seq2Seq...Output),
    else its `attentions`. A ModelOutput is a dataclass and a dict of the fields that are set."""
    name = type(out).__name__
    fields = {f.name for f in dataclasses.fields(out)}
    if "encoder_attentions" in fields:
        if tokens is not None or key_tokens is not None:
            raise AttnvizError(f"A {name} holds an encoder–decoder's attentions: name its tokens with encoder_tokens= "
                               "(the source) and decoder_tokens= (the target).")
        pair = {k: out.get(k) for k in ENCODER_DECODER_FIELDS}
        if all(a is None for a in pair.values()):
            raise AttnvizError(f"This {name} holds no attentions: {EAGER}.")
        return encoder_decoder_input(pair, encoder_tokens, decoder_tokens, name)
    if "attentions" not in fields:
        raise AttnvizError(f"A {name} has no attentions field: pass the output of a model call with "
                           "output_attentions=True, or its attentions.")
    if encoder_tokens is not None or decoder_tokens is not None:
        raise AttnvizError(f"A {name} holds one model's self-attention: name its tokens with tokens=.")
    if out.get("attentions") is None:
        raise AttnvizError(f"This {name} holds no attentions: {EAGER}.")
    raw = raw_set(out["attentions"], tokens, key_tokens)
    return Drawn([raw], name, f"{len(raw.row_labels)} tokens", [])


def encoder_decoder_input(pair: dict, encoder_tokens, decoder_tokens, name: str) -> Drawn:
    """An encoder–decoder's attentions by name (any of the three) -> their sets, cross-attention first, each checked
    against the others' token counts."""
    cross, decoder, encoder = (pair[k] for k in ("cross_attentions", "decoder_attentions", "encoder_attentions"))
    a = {k: checked_weights(v, k) for k, v in pair.items() if v is not None}  # name -> (L, H, n_q, n_k)
    n_enc = n_dec = None  # source and target token counts, from whichever attentions say them
    if "encoder_attentions" in a:
        n_enc = a["encoder_attentions"].shape[-1]
    if "decoder_attentions" in a:
        n_dec = a["decoder_attentions"].shape[-1]
    if "cross_attentions" in a:
        n_dec_cross, n_enc_cross = a["cross_attentions"].shape[-2:]
        for what, n, m in (("decoder", n_dec, n_dec_cross), ("encoder", n_enc, n_enc_cross)):
            if n is not None and n != m:
                raise AttnvizError(f"cross_attentions has {n_dec_cross} queries × {n_enc_cross} keys (target × source), "
                                   f"but the {what} attentions have {n} tokens.")
        n_dec, n_enc = n_dec_cross, n_enc_cross
    for k in ("encoder_attentions", "decoder_attentions"):
        if k in a and a[k].shape[-2] != a[k].shape[-1]:
            raise AttnvizError(f"{k} is a self-attention, (layers, heads, n, n); got shape {tuple(a[k].shape)}.")
    source = checked_labels(encoder_tokens, n_enc, "encoder_tokens") if n_enc is not None else []
    target = checked_labels(decoder_tokens, n_dec, "decoder_tokens") if n_dec is not None else []
    if n_enc is None and encoder_tokens is not None or n_dec is None and decoder_tokens is not None:
        raise AttnvizError("encoder_tokens= needs encoder_attentions= or cross_attentions=; decoder_tokens= needs "
                           "decoder_attentions= or cross_attentions=.")
    sets = []
    if cross is not None:
        sets.append(AttentionSet("cross-attention (decoder queries → encoder keys)", a["cross_attentions"], target,
                                 source, no_scores=NO_SCORES_RAW))
    if decoder is not None:
        sets.append(AttentionSet("decoder self-attention", a["decoder_attentions"], target, target,
                                 no_scores=NO_SCORES_RAW))
    if encoder is not None:
        sets.append(AttentionSet("encoder self-attention", a["encoder_attentions"], source, source,
                                 no_scores=NO_SCORES_RAW))
    counts = " → ".join(c for c in (f"{n_enc} source tokens" if n_enc is not None else "",
                                    f"{n_dec} target tokens" if n_dec is not None else "") if c)
    return Drawn(sets, name, counts, [])


NO_SCORES_RUN = ("This run kept no scores: run it with keep=True (model.run(text, keep=True)) and the click shows "
                 "q·k, the scale, the mask and the softmax of the row.")
NO_SCORES_PAIR = "A run with a target (model.run(source, target=...)) keeps no scores, only the weights."
NO_SCORES_RAW = ("Only weights were given. The scores before the softmax cannot be recovered from them: adding one "
                 "number to a whole row of scores gives the same weights.")


def run_input(res: RunResult) -> Drawn:
    """A RunResult's self-attention (with its scores when it kept them); a Seq2SeqResult's three attentions."""
    if isinstance(res, Seq2SeqResult):
        source, target = list(res.source_labels), list(res.labels)
        return Drawn([
            AttentionSet("cross-attention (decoder queries → encoder keys)", res.cross_attentions.float(), target,
                         source, no_scores=NO_SCORES_PAIR),
            AttentionSet("decoder self-attention (causal)", res.attentions.float(), target, target,
                         no_scores=NO_SCORES_PAIR),
            AttentionSet("encoder self-attention", res.encoder_attentions.float(), source, source,
                         no_scores=NO_SCORES_PAIR),
        ], res.model_name or "attention", f"{len(source)} source tokens → {len(target)} target tokens (decoder input)",
            list(res.notes))
    labels = list(res.labels)
    counts = f"{len(labels)} tokens"
    if not res.traces:
        return Drawn([AttentionSet("self-attention", res.attentions.float(), labels, labels, no_scores=NO_SCORES_RUN)],
                     res.model_name or "attention", counts, list(res.notes))
    n = len(labels)
    scores = [t.scores[0].float() for t in res.traces]  # Q Kᵀ per layer, recomputed from the kept q, k (nh, T, T)
    allowed = None
    if res.mask is not None:
        allowed = torch.broadcast_to(res.mask.bool().cpu(), (n, n)).clone()  # (T, T): the same in every layer
    return Drawn([AttentionSet("self-attention", res.attentions.float(), labels, labels, scores=scores,
                               allowed=allowed, scale=float(res.scale), d_head=int(res.traces[0].q.shape[-1]))],
                 res.model_name or "attention", counts, list(res.notes))


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
    if isinstance(attention, (list, tuple)) and all(a is None for a in attention):  # () or (None, None, ...)
        raise AttnvizError(EMPTY_ATTENTIONS)
    if isinstance(attention, (list, tuple)) and not isinstance(attention[0], (int, float)):
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


def stored_dtype(attention) -> torch.dtype:
    """The float type the weights came in (a list's first layer's): bfloat16, float16, or float32 for anything else."""
    first = attention[0] if isinstance(attention, (list, tuple)) and attention else attention
    if isinstance(first, torch.Tensor) and first.dtype in HALF_TYPES:
        return first.dtype
    if isinstance(first, np.ndarray) and first.dtype == np.float16:
        return torch.float16
    return torch.float32


def checked_weights(attention, what: str = "attention") -> torch.Tensor:
    """Raw attention -> (layers, heads, n_q, n_k) float32, checked with the tolerance of the type it came in."""
    try:
        a = stacked_layers(attention)
    except AttnvizError as err:
        if what == "attention":
            raise
        raise AttnvizError(f"{what}: {err}") from None
    check_weights(a, stored_dtype(attention))
    return a.contiguous()


def check_weights(a: torch.Tensor, stored: torch.dtype = torch.float32) -> None:
    """Finite, within 0..1 (an AttnvizError naming the first bad cell); rows that sum to neither 1 nor 0 warned about.
    stored: the type the weights came in, whose precision sets the tolerances."""
    eps = torch.finfo(stored).eps if stored in HALF_TYPES else 0.0
    row_tolerance, weight_tolerance = max(ROW_SUM_TOLERANCE, 2 * eps), max(WEIGHT_TOLERANCE, eps)
    bad = ~torch.isfinite(a)
    if bad.any():
        layer, head, row, col = (int(i) for i in bad.nonzero()[0])
        raise AttnvizError(f"attention holds {a[layer, head, row, col].item()} at layer {layer}, head {head}, query "
                           f"{row}, key {col}: weights after a softmax are finite numbers from 0 to 1.")
    outside = (a < -weight_tolerance) | (a > 1 + weight_tolerance)
    if outside.any():
        layer, head, row, col = (int(i) for i in outside.nonzero()[0])
        raise AttnvizError(f"attention holds {a[layer, head, row, col].item():g} at layer {layer}, head {head}, query "
                           f"{row}, key {col}: weights after a softmax lie from 0 to 1. Scores before the softmax "
                           "are not weights.")
    sums = a.double().sum(-1)  # (L, H, n_q)
    odd = ((sums - 1).abs() > row_tolerance) & (sums.abs() > row_tolerance)
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
    check_weights(a, stored_dtype(attention))
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
