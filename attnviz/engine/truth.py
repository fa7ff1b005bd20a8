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
