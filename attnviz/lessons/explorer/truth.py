"""What the truth badge says: what the check against transformers compared, and whether the heatmaps on screen
are those settings or attnviz's own (another mask, another scale), which the check does not cover."""

from __future__ import annotations

import math

import torch

from attnviz.engine.attention import is_standard_scale
from attnviz.engine.mask_kinds import MASKS


def checked_settings(causal_model: bool, d_k: int, builtin_window: int | None = None) -> str:
    """The settings the check runs at, in words: the model's own mask and 1/√d_k, as it was trained."""
    if causal_model:
        mask = "its built-in causal mask" + (f" with its sliding window of {builtin_window} keys" if builtin_window else "")
    else:
        mask = "no mask"
    return f"{mask}, scores divided by √d_k = √{d_k}"


def mask_differs(shown: torch.Tensor | None, builtin: torch.Tensor | None) -> bool:
    """Whether the mask applied on screen (a run's res.mask, the model's own included) lets a different set of
    query–key pairs through than the model's own mask (None = every pair)."""
    if shown is None and builtin is None:
        return False
    if shown is None or builtin is None:
        present = shown if shown is not None else builtin
        return not bool(present.all())
    return shown.shape != builtin.shape or not torch.equal(shown.cpu(), builtin.cpu())


def mask_words(spec: str) -> str:
    """'a causal mask', 'a sliding window mask (window:2)' for a mask spec, as the registry of kinds names it."""
    kind = MASKS.get(spec.partition(":")[0].strip().lower()) if "&" not in spec else None
    if kind is None:
        return f"the mask {spec}"
    shown = ":" in spec and kind.readable_spec
    return f"a {kind.title} mask" + (f" ({spec})" if shown else "")


def unchecked_settings(differs_in_mask: bool, mask_spec: str, scale: float, d_k: int) -> list[str]:
    """What the heatmaps on screen use that the check did not: ['a causal mask', 'no scaling (factor 1)']."""
    parts = []
    if differs_in_mask:
        parts.append(mask_words(mask_spec))
    if not is_standard_scale(scale, d_k):
        parts.append("no scaling (factor 1)" if scale == 1.0
                     else f"the scale factor {scale:g} instead of 1/√{d_k} ≈ {1 / math.sqrt(d_k):.3f}")
    return parts


def badge_sentence(max_abs_diff: float, checked: str) -> str:
    """The badge for a match: what was compared, at which settings."""
    return (f"✓ matches transformers at the trained settings ({checked}): the Hugging Face library computes the same "
            f"weights for this text, largest difference {max_abs_diff:.1e} over every layer, head and cell "
            "(tolerance 1e-5).")


def unchecked_sentence(unchecked: list[str]) -> str | None:
    """Said above heatmaps drawn at settings the check did not run at; None when they are the checked ones."""
    if not unchecked:
        return None
    return (f"These heatmaps use {' and '.join(unchecked)}, which the check against transformers did not cover (it "
            "ran at the trained settings): they are attnviz's own numbers, from the same code that matched.")


UNKNOWN_TOKENS = ("[UNK]", "<unk>")  # WordPiece's and SentencePiece's / BPE's names for it


def unknown_pieces(model, text: str) -> tuple[str, list[str]]:
    """The tokenizer's unknown token and the typed piece each of its occurrences in this text stands for
    (('', []) for a tokenizer without one, such as the toy's, which gives every word an id)."""
    unk = next((t for t in UNKNOWN_TOKENS if t in model.tokenizer.special), "")
    if not unk:
        return "", []
    enc = model.tokenizer.backend.encode(text)  # the encoding Model.run made (truncation included), with offsets
    return unk, [text[a:b] for token, (a, b) in zip(enc.tokens, enc.offsets, strict=True) if token == unk]


def unknown_note(model_name: str, unk: str, pieces: list[str], n_tokens: int) -> str | None:
    """Said when [UNK] tokens appear: how many, what they replaced, and that the model's vocabulary lacks them."""
    count = len(pieces)
    if not count:
        return None
    shown = sorted(set(pieces), key=pieces.index)
    which = f" ({', '.join(shown[:12])}{', …' if len(shown) > 12 else ''})"
    return (f"{count} of the {n_tokens} tokens are {unk}{which}: {model_name}'s vocabulary has no piece for these "
            f"characters, so its tokenizer puts its one 'unknown' token in their place. The model cannot tell them "
            f"apart: their rows and columns show attention to and from that placeholder, not to the text typed.")
