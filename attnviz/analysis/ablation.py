"""Knock heads out: a forward pass of attnviz's own model with some heads' outputs replaced before W_O.

A head's output at query i is head_h(i) = Σ_j α_ij v_j, a (d_head,) vector; the layer then adds
Concat(head_1 .. head_nh)(i) · W_O. Ablating head h of layer l replaces head_h(i), at every position i, by

    zero-ablation   0
    mean-ablation   the mean of head_h over a corpus: every real token of every sentence (mean_head_outputs)

and leaves everything else as computed (its weights, the other heads, the later layers, which then see the
changed stream). A set of heads is a collection of (layer, head) pairs; heads are query heads (under GQA the
K/V heads stay shared: only the output of the named query head is replaced).

    heads = check_heads(model, [(1, 0), (1, 1)])
    hidden, weights, _ = ablated_forward(model, ids, None, heads, "zero")       # hidden (B, T, C)

A mask here is what it is in model.run (attnviz.engine.mask_rule): None is the model's own mask (a decoder's causal
one), a bool tensor (a batch's padding (B, 1, 1, T)) is added to it, and only NOTHING_MASKED runs with none at all.

A sweep over many sets of heads passes the clean run's streams (clean_run(...).streams): nothing below the lowest
ablated layer changes, so each ablated forward starts there instead of at the embeddings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError

KINDS = {"zero": "set to zero", "mean": "set to its mean over the corpus"}

HeadSet = tuple[tuple[int, int], ...]  # sorted, distinct (layer, head) pairs


def check_heads(model, heads: Iterable) -> HeadSet:
    """The heads as a sorted tuple of distinct (layer, head) pairs of this model; AttnvizError for an empty set,
    a pair that is not two whole numbers, or one outside the model (naming its ranges)."""
    try:
        pairs = [tuple(pair) for pair in heads]
    except TypeError:
        raise AttnvizError("Heads are given as (layer, head) pairs, e.g. [(1, 0), (1, 1)].") from None
    if not pairs:
        raise AttnvizError("Pick at least one head to knock out: the set of heads is empty.")
    L, H = model.n_layers, model.n_heads
    for pair in pairs:
        if len(pair) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in pair):
            raise AttnvizError(f"{pair!r} is not a (layer, head) pair of whole numbers.")
        layer, head = pair
        if not (0 <= layer < L and 0 <= head < H):
            raise AttnvizError(f"There is no layer {layer}, head {head} in {model.name}: layers are 0 to {L - 1} and "
                               f"heads 0 to {H - 1}.")
    return tuple(sorted(set(pairs)))


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise AttnvizError(f"An ablation is 'zero' or 'mean', not {kind!r}.")
    return kind


def head_ablation(model, heads: HeadSet, kind: str = "zero", means: torch.Tensor | None = None) -> dict:
    """The engine's head_ablation argument (Model.forward): {layer: (heads, values (len(heads), d_head))}.

    means: (n_layers, n_heads, d_head) from mean_head_outputs, needed for kind "mean"."""
    check_kind(kind)
    if kind == "mean" and means is None:
        raise AttnvizError("Mean-ablation needs the heads' mean outputs over a corpus (mean_head_outputs).")
    plan: dict[int, tuple[list[int], torch.Tensor]] = {}
    for layer in sorted({lay for lay, _ in heads}):
        chosen = [h for lay, h in heads if lay == layer]
        if kind == "zero":
            values = torch.zeros(len(chosen), model.d_head, device=model.device)  # (k, hs)
        else:
            values = means[layer, chosen].to(model.device)  # (k, hs)
        plan[layer] = (chosen, values)
    return plan


def ablated_forward(model, ids: torch.Tensor, mask, heads: Iterable = (), kind: str = "zero",
                    means: torch.Tensor | None = None, keep: bool = False,
                    streams: Sequence[torch.Tensor] | None = None):
    """Model.forward (ids (B, T) -> final hidden (B, T, C), weights [(B, nh, T, T)] per layer, traces) with the
    heads' outputs replaced. mask: on top of the model's own (None: the model's own alone; see the module doc).
    An empty `heads` is the plain forward, bit for bit (no head_ablation at all); use check_heads first where an
    empty set is a mistake.

    streams: clean_streams(model, ids, mask) for these ids and mask: the forward then starts at the lowest ablated
    layer from the clean stream entering it (Model.forward's resume), and weights and traces start at that layer.
    The final hidden is the same as a forward from the embeddings: the layers below see no ablated head."""
    heads = tuple(heads)
    plan = head_ablation(model, check_heads(model, heads), kind, means) if heads else None
    resume = None
    if plan and streams is not None:
        first = min(plan)
        resume = (first, streams[first])
    with torch.inference_mode():
        return model.forward(ids.to(model.device), mask, True, keep, head_ablation=plan, resume=resume)


@dataclass(frozen=True)
class CleanRun:
    """A forward with nothing ablated, kept: its final hidden (B, T, C) and each layer's trace. One run holds what a
    comparison of knock-outs needs from the clean model: the streams they start from, the heads' means, and the
    final vectors they are compared with (each a whole forward of its own until 2026-11-27)."""

    hidden: torch.Tensor
    traces: list

    @property
    def streams(self) -> list[torch.Tensor]:
        """The residual stream entering each layer, [(B, T, C)] * n_layers: where ablated_forward(..., streams=)
        starts."""
        return [t.x_in for t in self.traces]

    def head_means(self, real: torch.Tensor) -> torch.Tensor:
        """(n_layers, n_heads, d_head): each head's output Σ_j α_ij v_j averaged over every real token of the batch
        (real (B, T) bool, False = padding): what mean-ablation puts in its place."""
        weight = real.to(self.hidden.device).float()[:, None, :, None]  # (B, 1, T, 1)
        sums = [(t.head_outputs.float() * weight).sum(dim=(0, 2)) for t in self.traces]  # each (nh, hs)
        return (torch.stack(sums) / weight.sum()).cpu()  # (L, nh, hs)


def clean_run(model, ids: torch.Tensor, mask) -> CleanRun:
    """Model.forward of ids (B, T) with nothing ablated, its traces kept (the final hidden is the same, to the bit, as
    a forward that keeps none)."""
    with torch.inference_mode():
        hidden, _, traces = model.forward(ids.to(model.device), mask, True, True)
    return CleanRun(hidden, traces)


def clean_streams(model, ids: torch.Tensor, mask) -> list[torch.Tensor]:
    """The streams of clean_run(model, ids, mask), where ablated_forward(..., streams=) starts."""
    return clean_run(model, ids, mask).streams


def mean_head_outputs(model, ids: torch.Tensor, mask, real: torch.Tensor) -> torch.Tensor:
    """CleanRun.head_means of a clean run of these ids and mask."""
    return clean_run(model, ids, mask).head_means(real)
