"""What the Cross-attention page shows for the model at hand, in one call.

An encoder–decoder (BART): its own cross-attention, decoder layer L (real=True). Any other model: layer L's
projections applied across two sentences (real=False), a labelled demonstration (across_sentences.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attnviz.errors import AttnvizError
from attnviz.lessons.cross_attention.across_sentences import projections_across_sentences


@dataclass
class CrossView:
    real: bool  # True = the model's own cross-attention; False = the two-sentence demonstration
    layer: int
    weights: torch.Tensor  # (nh, T, S): row = target position (query), column = source token (key)
    target_labels: list[str]
    source_labels: list[str]
    n_heads: int
    d_model: int
    d_head: int
    scale: float
    decoder_self: torch.Tensor | None = None  # (nh, T, T) the decoder's causal self-attention, same layer
    mask: torch.Tensor | None = None  # the decoder self-attention's mask (causal, plus the user's)
    notes: list[str] = field(default_factory=list)


def is_encoder_decoder(model) -> bool:
    return model.is_encoder_decoder


def can_cross_attend(model) -> bool:
    """An encoder–decoder's own cross-attention, or an encoder whose projections the demonstration can apply
    across two sentences; not a decoder-only model."""
    return is_encoder_decoder(model) or not model.cfg.causal


def cross_layers(model) -> tuple[int, int]:
    """(layers, heads) to choose from: the decoder's for an encoder–decoder, else the model's own."""
    if is_encoder_decoder(model):
        return model.n_decoder_layers, model.n_decoder_heads
    return model.n_layers, model.n_heads


def cross_view(model, source: str, target: str, layer: int, mask=None, scale=True) -> CrossView:
    """Layer `layer`'s target × source attention per head. mask: the decoder's self-attention only (real path)."""
    n_layers, n_heads = cross_layers(model)
    if not 0 <= layer < n_layers:
        raise AttnvizError(f"{model.name} has {'decoder ' if is_encoder_decoder(model) else ''}layers "
                           f"0..{n_layers - 1}, not {layer}.")
    if is_encoder_decoder(model):
        res = model.run(source, target=target, mask=mask, scale=scale)
        return CrossView(True, layer, res.cross_attentions[layer], res.labels, res.source_labels, n_heads,
                         model.dec_cfg.d_model, model.dec_cfg.d_head, res.scale, decoder_self=res.attentions[layer],
                         mask=res.mask, notes=list(res.notes))
    demo = projections_across_sentences(model, source, target, layer, scale=scale)
    return CrossView(False, layer, demo.weights, demo.target_labels, demo.source_labels, n_heads, model.d_model,
                     model.d_head, demo.scale, notes=demo.notes)


def decoder_mask_spec(model, target: str, spec) -> tuple[str, str | None]:
    """The sidebar's mask as the decoder's self-attention can take it -> (spec to use, why it was changed or None).

    Only a real decoder uses it; the demonstration has no mask at all. An empty custom mask means the
    causal pattern for this target; a padding mask or one that does not fit the target becomes 'none'.
    """
    from attnviz.engine.masks import padding_count, parse_mask

    if not spec or spec == "none":
        return "none", None
    if not is_encoder_decoder(model):
        return "none", "The sidebar's mask is not used here: the demonstration's queries read every source token."
    if padding_count(spec):
        return "none", "Padding masks are not offered on an encoder–decoder: no extra mask is used."
    n = len(model.decoder_input(target)[1])
    if spec == "custom:":
        spec = "custom:" + "/".join("1" * (i + 1) + "0" * (n - i - 1) for i in range(n))
    try:
        parse_mask(spec, n)
    except AttnvizError as err:
        return "none", f"Mask: {err} No extra mask is used."
    return spec, None


# ---- what the demonstration's pictures do not mean ----------------------------------------------


def near_diagonal_share(weights: torch.Tensor, width: int = 1) -> float:
    """Mean over heads and target rows of the weight on source tokens at most `width` positions from the row's own
    position: (nh, T, S) -> a share in [0, 1]. A pattern driven by position alone scores the same for any two
    sentences of similar length."""
    T, S = weights.shape[-2:]
    i = torch.arange(T).unsqueeze(1)  # target positions (T, 1)
    j = torch.arange(S).unsqueeze(0)  # source positions (1, S)
    near = ((i - j).abs() <= width).to(weights.dtype)  # (T, S)
    return float((weights * near).sum(-1).mean())


def words_reversed(text: str) -> str:
    """The text's words in reverse order: the same words (the same meaning to match, if any), other positions."""
    return " ".join(reversed(text.split()))


def position_warning(model_name: str, share: float, share_reversed: float, has_positions: bool = True) -> str | None:
    """Said above the demonstration's heatmaps: a diagonal there follows positions, not meaning, with the numbers.
    None for a model that adds no positions to its input (no position can shape its pattern)."""
    if not has_positions:
        return None
    return (f"**A diagonal here is position, not alignment.** Both sentences carry {model_name}'s position "
            "embeddings, and a layer trained for self-attention may match a query at position i with keys near "
            f"position i. Measured now: {share:.0%} of the weight, averaged over heads and target rows, falls within "
            f"one position of the diagonal; with the target's words in reverse order it is {share_reversed:.0%}. "
            + ("It hardly moves when the words move: the diagonal follows the positions, not which words translate "
               "which." if abs(share - share_reversed) < 0.05 else
               "The words' order changes it, so the words play a part too; still, these weights were never trained "
               "to align a translation."))


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
