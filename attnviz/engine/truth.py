"""The live truth check: our attentions against transformers' own, for the same tokens.

transformers is imported only here (it is slow to import); the reference model is loaded from
the same folder with eager attention (the default sdpa returns no weights) in float32.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import torch

from attnviz.engine.models.model import Model


@dataclass
class TruthCheck:
    max_abs_diff: float | None  # None when there is no reference
    tolerance: float
    reason: str = ""  # why there is no reference

    @property
    def matches(self) -> bool:
        return self.max_abs_diff is not None and self.max_abs_diff <= self.tolerance


@lru_cache(maxsize=2)
def reference_model(folder: str):
    """transformers' own model for a folder, eager attention, float32, eval mode."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoModel

    return AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()


def reference_attentions(model: Model, token_ids: list[int]) -> torch.Tensor:
    """transformers' attentions for these token ids: (n_layers, n_heads, n, n) float32."""
    ref = reference_model(model.source)
    with torch.inference_mode():
        out = ref(torch.tensor([token_ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).float()


def check_against_transformers(model: Model, text: str, tolerance: float = 1e-5) -> TruthCheck:
    """Max |ours - transformers| over every layer, head and cell, at the default mask and scale."""
    if model.source is None:
        return TruthCheck(None, tolerance, "the toy model's weights are seeded here; transformers has no copy of it")
    res = model.run(text)
    theirs = reference_attentions(model, res.token_ids)
    return TruthCheck(float((res.attentions - theirs).abs().max()), tolerance)


# ---- generation: greedy tokens against transformers' own generate ------------------------------


@dataclass
class GenerationCheck:
    ours: list[int]  # the new token ids attnviz chose
    theirs: list[int]  # the ones transformers' greedy generate chose for the same prompt ids

    @property
    def matches(self) -> bool:
        return self.ours == self.theirs

    @property
    def first_difference(self) -> int | None:
        """The first step where the two disagree, None when they agree throughout."""
        return next((i for i, (a, b) in enumerate(zip(self.ours, self.theirs, strict=False)) if a != b), None)


@lru_cache(maxsize=2)
def reference_causal_lm(folder: str):
    """transformers' causal LM (with its head) for a folder, eager attention, float32, eval mode."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()


def reference_generate(folder: str, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    """transformers' greedy continuation (do_sample=False, never stopping early at end-of-text): the new ids."""
    ref = reference_causal_lm(folder)
    ids = torch.tensor([prompt_ids])
    with torch.inference_mode():
        out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=False,
                           min_new_tokens=0, eos_token_id=[], pad_token_id=0)
    return out[0, len(prompt_ids):].tolist()


def check_generation_against_transformers(model: Model, generation) -> GenerationCheck | None:
    """A Generation's new tokens against transformers' greedy generate from the same prompt ids (None: no reference)."""
    if model.source is None:
        return None
    theirs = reference_generate(model.source, generation.prompt_ids, len(generation.steps))
    return GenerationCheck(ours=generation.new_ids, theirs=theirs)
