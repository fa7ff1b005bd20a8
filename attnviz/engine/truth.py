"""The live truth check: our attentions against transformers' own, for the same tokens.

transformers is imported only here (it is slow to import); the reference model is loaded from
the same folder with eager attention (the default sdpa returns no weights) in float32.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache

import torch

from attnviz.engine.models.model import Model, RunResult


@dataclass
class TruthCheck:
    max_abs_diff: float | None  # None when there is no reference
    tolerance: float
    reason: str = ""  # why there is no reference
    parts: dict[str, float] = field(default_factory=dict)  # encoder–decoder: max |Δ| per kind of attention

    @property
    def matches(self) -> bool:
        return self.max_abs_diff is not None and self.max_abs_diff <= self.tolerance


# transformers builds its modules lazily, on first use; several threads using it for the first time at once
# (a class opening the page together: 18 of 20 sessions) can see a half-made module ("cannot import name
# 'AutoModel'"). So its imports, and the first loads that import each family's code, happen in one thread at a
# time, and a server imports it before a class arrives (ui/warm.py, from app.py's first run).
TRANSFORMERS_LOCK = threading.RLock()


def import_reference_code() -> None:
    """Import what the truth checks need from transformers, once per process (the others wait, then return)."""
    with TRANSFORMERS_LOCK:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from transformers import AutoModel, AutoModelForCausalLM  # noqa: F401, PLC0415 - seconds, kept off app start


def reference_model(folder: str):
    """transformers' own model for a folder, eager attention, float32, eval mode (loaded once per folder)."""
    with TRANSFORMERS_LOCK:
        return _reference_model(folder)


@lru_cache(maxsize=2)
def _reference_model(folder: str):
    import_reference_code()
    from transformers import AutoModel  # noqa: PLC0415 - transformers takes seconds: only when a check runs

    return AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()


def reference_attentions(model: Model, token_ids: list[int]) -> torch.Tensor:
    """transformers' attentions for these token ids: (n_layers, n_heads, n, n) float32."""
    ref = reference_model(model.source)
    with torch.inference_mode():
        out = ref(torch.tensor([token_ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).float()


def reference_seq2seq_attentions(model: Model, source_ids: list[int], decoder_ids: list[int]) -> dict[str, torch.Tensor]:
    """transformers' encoder, decoder (self) and cross attentions for these ids, given decoder_input_ids
    explicitly (so transformers does not shift anything itself): each (n_layers, n_heads, rows, cols)."""
    ref = reference_model(model.source)
    with torch.inference_mode():
        out = ref(input_ids=torch.tensor([source_ids]), decoder_input_ids=torch.tensor([decoder_ids]),
                  output_attentions=True)
    stack = lambda atts: torch.stack([a[0] for a in atts]).float()
    return {"encoder": stack(out.encoder_attentions), "decoder": stack(out.decoder_attentions),
            "cross": stack(out.cross_attentions)}


def check_seq2seq_against_transformers(model: Model, source: str, target: str, tolerance: float = 1e-5) -> TruthCheck:
    """Max |ours - transformers| over the encoder's, the decoder's and the cross-attentions (default mask and scale)."""
    res = model.run(source, target=target)
    theirs = reference_seq2seq_attentions(model, res.source_token_ids, res.token_ids)
    ours = {"encoder": res.encoder_attentions, "decoder": res.attentions, "cross": res.cross_attentions}
    parts = {k: float((ours[k] - theirs[k]).abs().max()) for k in ours}
    return TruthCheck(max(parts.values()), tolerance, parts=parts)


def check_decoder_block_against_transformers(model: Model, source: str, target: str, steps,
                                            tolerance: float = 1e-5) -> TruthCheck:
    """An encoder–decoder's decoder layer, stage by stage (lessons/encoder_layer/decoder_block.py), against what
    transformers keeps of it: its encoder output, the decoder stream entering and leaving the layer
    (output_hidden_states) and the layer's self- and cross-attention weights. Trained settings only.

    The weights (in [0, 1]) are compared as they are; a hidden state, whose entries reach about 7 here, by its
    largest |Δ| divided by its largest |entry|: float32 rounding grows with the values (a LayerNorm's output of
    size 6 differs by up to 3e-5, 5e-6 of its size, on held-out sentences)."""
    _, decoder_ids, _, _ = model.decoder_input(target)
    ref = reference_model(model.source)
    with torch.inference_mode():
        out = ref(input_ids=torch.tensor([model.encode(source).ids]), decoder_input_ids=torch.tensor([decoder_ids]),
                  output_attentions=True, output_hidden_states=True)
    L = steps.layer
    pairs = {"encoder output": (steps.h_enc, out.encoder_last_hidden_state[0]),
             "entering": (steps.y_in, out.decoder_hidden_states[L][0]),
             "leaving": (steps.y_out, out.decoder_hidden_states[L + 1][0]),
             "self-attention": (steps.self_weights, out.decoder_attentions[L][0]),
             "cross-attention": (steps.cross_weights, out.cross_attentions[L][0])}
    parts = {}
    for k, (ours, theirs) in pairs.items():
        gap = float((ours - theirs.float()).abs().max())
        parts[k] = gap if k.endswith("attention") else gap / max(float(theirs.abs().max()), 1.0)
    return TruthCheck(max(parts.values()), tolerance, parts=parts)


def check_against_transformers(model: Model, text: str, tolerance: float = 1e-5, target: str | None = None,
                               ours: RunResult | None = None) -> TruthCheck:
    """Max |ours - transformers| over every layer, head and cell, at the default mask and scale.

    With a target (an encoder–decoder only), every kind of attention is compared: see TruthCheck.parts.
    ours: model.run(text) when the caller already holds it (a page's cached run), so the model does not run twice.
    """
    if model.source is None:
        return TruthCheck(None, tolerance, "the toy model's weights are seeded here; transformers has no copy of it")
    if target is not None:
        return check_seq2seq_against_transformers(model, text, target, tolerance)
    res = model.run(text) if ours is None else ours
    if model.is_encoder_decoder:  # the encoder alone: transformers' encoder alone
        with torch.inference_mode():
            out = reference_model(model.source).get_encoder()(torch.tensor([res.token_ids]), output_attentions=True)
        theirs = torch.stack([a[0] for a in out.attentions]).float()
        return TruthCheck(float((res.attentions - theirs).abs().max()), tolerance)
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


def reference_causal_lm(folder: str):
    """transformers' causal LM (with its head) for a folder, eager attention, float32, eval mode."""
    with TRANSFORMERS_LOCK:
        return _reference_causal_lm(folder)


@lru_cache(maxsize=2)
def _reference_causal_lm(folder: str):
    import_reference_code()
    from transformers import AutoModelForCausalLM  # noqa: PLC0415 - transformers takes seconds: only when a check runs

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
