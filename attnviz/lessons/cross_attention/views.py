"""What the Cross-attention page shows for an encoder–decoder (BART), in one call: its own cross-attention in
decoder layer L, and the same layer's causal self-attention for contrast.

(A model without a decoder has no cross-attention; the page shows attnviz-tiny-bart instead. An earlier
"demonstration" applied an encoder's projections across two sentences; its diagonal followed positions, not
alignment, so it went.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attnviz.draw.describe import mask_button_name
from attnviz.engine.mask_kinds import padding_count, parse_mask
from attnviz.errors import AttnvizError


@dataclass
class CrossView:
    layer: int
    weights: torch.Tensor  # (nh, T, S): row = target position (query), column = source token (key)
    target_labels: list[str]
    source_labels: list[str]
    n_heads: int
    d_model: int
    d_head: int
    scale: float
    decoder_self: torch.Tensor  # (nh, T, T) the decoder's causal self-attention, same layer
    mask: torch.Tensor  # the decoder self-attention's mask (causal, plus the user's)
    notes: list[str] = field(default_factory=list)


def is_encoder_decoder(model) -> bool:
    return model.is_encoder_decoder


def cross_layers(model) -> tuple[int, int]:
    """(decoder layers, decoder heads) to choose from."""
    return model.n_decoder_layers, model.n_decoder_heads


def cross_view(model, source: str, target: str, layer: int, mask=None, scale=True) -> CrossView:
    """Decoder layer `layer`'s target × source attention per head. mask: the decoder's self-attention only."""
    if not is_encoder_decoder(model):
        raise AttnvizError(f"{model.name} has no decoder, so no cross-attention.")
    n_layers, n_heads = cross_layers(model)
    if not 0 <= layer < n_layers:
        raise AttnvizError(f"{model.name} has decoder layers 0..{n_layers - 1}, not {layer}.")
    res = model.run(source, target=target, mask=mask, scale=scale)
    return CrossView(layer, res.cross_attentions[layer], res.labels, res.source_labels, n_heads, model.dec_cfg.d_model,
                     model.dec_cfg.d_head, res.scale, decoder_self=res.attentions[layer], mask=res.mask,
                     notes=list(res.notes))


def decoder_mask_spec(model, target: str, spec) -> tuple[str, str | None]:
    """The sidebar's mask as the decoder's self-attention can take it -> (spec to use, why it was changed or None).

    An empty custom mask means the causal pattern for this target; a padding mask or one that does not fit the
    target becomes 'none'.
    """
    applied, note = decoder_mask_for(spec, None)
    if applied == "none":  # no mask, or a padding mask: the target is not read here (its own errors come later)
        return applied, note
    return decoder_mask_for(spec, len(model.decoder_input(target)[1]))


def decoder_mask_for(spec, n: int | None) -> tuple[str, str | None]:
    """decoder_mask_spec for a target of n decoder positions; n None (the target not known yet: the top row, drawn
    before the page's target boxes) skips only the check that a mask fits the target."""
    if not spec or spec == "none":
        return "none", None
    if padding_count(spec):
        return "none", "Padding masks are not offered on an encoder–decoder: no extra mask is used."
    if spec == "custom:":
        if n is None:
            return "causal", None  # the causal pattern, for whatever target comes
        spec = "custom:" + "/".join("1" * (i + 1) + "0" * (n - i - 1) for i in range(n))
    if n is None:
        return spec, None
    try:
        parse_mask(spec, n)
    except AttnvizError as err:
        return "none", f"Mask: {err} No extra mask is used."
    return spec, None


def decoder_mask_name(applied: str) -> str:
    """The mask button's words for what the page applies (`applied`: decoder_mask_spec's spec): cross-attention, the
    grid under the button, takes no mask; the decoder's self-attention its built-in causal mask, then the shared mask
    on top of it ("built-in causal (decoder)" above the cross-attention grid read as if the grid were masked)."""
    return f"cross: none · self: {mask_button_name(applied, causal_model=True)}"  # the decoder's self-attention


def wordpiece_note(sides: dict[str, list[str]]) -> str | None:
    """Which words a WordPiece tokenizer cut into pieces ("ass ##is"), per side ({"source": labels, ...}), and what
    '##' means; None when no word was cut."""
    cut = []
    for labels in sides.values():
        word: list[str] = []
        for label in [*labels, ""]:  # "" flushes the last word
            if label.startswith("##") and word:
                word.append(label)
                continue
            if len(word) > 1:
                cut.append(f"{' '.join(word)} (= {''.join(p.removeprefix('##') for p in word)})")
            word = [label]
    if not cut:
        return None
    shown = list(dict.fromkeys(cut))
    return ("**Word pieces.** The tokenizer cut words its vocabulary lacks into pieces it has: "
            + ", ".join(shown[:8]) + (", …" if len(shown) > 8 else "")
            + ". “##” marks a piece that continues the word before it. Each piece is its own row or column with its "
            "own weights: a word is not one token.")
