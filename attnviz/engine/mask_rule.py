"""What a `mask` argument beside a model means, everywhere in attnviz: the one rule.

A function that runs a model with a mask (Model.run, Model.forward, the analysis's ablated_forward, clean_run, ...)
applies the model's own mask, as `model.run` always has, AND the mask it is given:

    None, "none"       the model's own mask alone: causal for a decoder (GPT-2, the tiny Llama), with Mistral's
                       sliding window where it has one; nothing for an encoder (BERT)
    "window:2", ...    a spec (attnviz.engine.mask_kinds), on top of the model's own
    a bool tensor      on top of the model's own (True = may attend), broadcastable to (..., n, keys)
    NOTHING_MASKED     no mask at all, not even the model's own: a decoder's tokens then see the ones after them.
                       Only when asked for in so many words: a decoder run so has never been trained for it.

Why one rule: a forward that took None as "no mask at all" ran the tiny Llama without its causal mask whenever a
caller forgot to pass the model's own; its repeated-half loss was then 7.9 nats instead of 1.34, and nothing said so.

Below the model (stack.layer_forward, a lesson recomputing one layer from a trace) a mask is the one that layer
applied, already resolved (a trace's mask): those functions take no model and add nothing.
"""

from __future__ import annotations

import torch

from attnviz.engine.mask_kinds import parse_mask
from attnviz.engine.masks import combine_masks
from attnviz.errors import AttnvizError


class _NothingMasked:
    """The one value of NOTHING_MASKED."""

    def __repr__(self) -> str:
        return "NOTHING_MASKED"


NOTHING_MASKED = _NothingMasked()


def applied_mask(own: torch.Tensor | None, mask, n: int) -> torch.Tensor | None:
    """The mask a run applies: the model's own mask `own` AND `mask` (see the module doc); None = nothing masked.

    n: the run's new tokens (a spec is built for n × n; a tensor is taken as given, a batch's (B, 1, 1, n) too)."""
    if mask is NOTHING_MASKED:
        return None
    if isinstance(mask, str):
        if own is not None and own.shape[-1] != n:
            raise AttnvizError("A mask spec covers the tokens of one run: with cached tokens, give a bool tensor.")
        mask = parse_mask(mask, n)
    elif mask is not None and not isinstance(mask, torch.Tensor):
        raise AttnvizError(f"A mask must be a name such as 'causal', a bool tensor, None (the model's own mask) or "
                           f"NOTHING_MASKED, not {type(mask).__name__}.")
    elif mask is not None and mask.dtype != torch.bool:
        raise AttnvizError(f"A mask tensor must be boolean (True = may attend), got dtype {mask.dtype}.")
    if own is not None and mask is not None:
        own = own.to(mask.device)
    return combine_masks(own, mask)
