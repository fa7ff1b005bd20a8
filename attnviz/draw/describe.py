"""Plain sentences that read the current settings aloud, for the class."""

from __future__ import annotations

import math
from itertools import groupby

from attnviz.engine.attention import is_standard_scale
from attnviz.engine.mask_kinds import MaskKind, mask_kind
from attnviz.errors import AttnvizError

CAUSAL_MODEL_NO_MASK = ("no extra mask: this model is a decoder, so its built-in causal mask applies, and each token "
                        "sees itself and the tokens before it, never the ones after")


def scale_name(scale: float, d_head: int | None) -> str:
    """The factor on the scores as a class writes it: 1/√32 (the model's own), 1 (unscaled) or the number."""
    if d_head and is_standard_scale(scale, d_head):
        return f"1/√{d_head}"
    return "1 (unscaled)" if scale == 1.0 else f"{scale:g}"


def describe_layer_windows(windows) -> str:
    """A sentence for sliding windows that differ between layers (Qwen2's max_window_layers), '' when every
    layer has the same one (describe_mask's builtin_window says that) or none. windows: per layer, keys or None."""
    windows = tuple(windows or ())
    if len(set(windows)) <= 1:
        return ""
    parts = []
    for w, stretch in groupby(enumerate(windows), key=lambda layer_window: layer_window[1]):  # layers with one window
        layers = [layer for layer, _ in stretch]
        a, b = layers[0], layers[-1]
        parts.append(f"layer{'s' if a != b else ''} {a}{f'–{b}' if a != b else ''}: "
                     + (f"a sliding window of {w} keys (itself and the {w - 1} before it)" if w else "full causal attention"))
    return ("Its layers differ, by its architecture: " + "; ".join(parts)
            + ". Each layer's window applies whatever mask is chosen here.")


def kinds_of(spec: str) -> list[MaskKind | None]:
    """The registry's kind of each '&' part of a spec, in order; None for a name it does not know (or parameters it
    cannot read: the words then name the part as written)."""
    kinds = []
    for part in spec.split("&"):
        try:
            kind = mask_kind(part.strip().partition(":")[0])
            kind.values(part.strip())
        except AttnvizError:
            kind = None
        kinds.append(kind)
    return kinds


def describe_mask(spec, causal_model: bool = False, builtin_window: int | None = None) -> str:
    """'causal: each token sees ...' for a mask spec; several parts are joined with 'and'.

    causal_model: the model is a decoder (GPT-2, Llama), whose causal mask is always applied on top of the spec.
    builtin_window: a sliding window that is part of the model (Mistral's sliding_window), applied whatever is chosen.
    """
    window = "" if not builtin_window else (
        f" Its architecture also has a sliding window of {builtin_window} keys: each token sees itself and at most the "
        f"{builtin_window - 1} tokens before it, in every layer, whatever mask is chosen here.")
    if spec is None or not isinstance(spec, str):
        spec = "none" if spec is None else "custom"
    kinds = kinds_of(spec)
    if causal_model and all(kind is not None and kind.adds_nothing_on_a_decoder() for kind in kinds):
        return CAUSAL_MODEL_NO_MASK[0].upper() + CAUSAL_MODEL_NO_MASK[1:] + "." + window
    parts = []
    for kind, part in zip(kinds, spec.split("&"), strict=True):
        if kind is None:
            parts.append(part.strip().partition(":")[0].lower())
        else:  # the registry's own sentence
            parts.append(kind.sentence.format(arg=kind.first_value(part.strip())))
    sentence = "; and ".join(parts)
    if causal_model and not any(kind is not None and kind.decoders_own for kind in kinds):
        sentence += (". This model is a decoder, so its built-in causal mask applies as well: a token never sees "
                     "the ones after it")
    return sentence[0].upper() + sentence[1:] + "." + window


def mask_button_name(spec: str | None, causal_model: bool = False, builtin_window: int | None = None) -> str:
    """The mask a run applies, in a few words for a button ("window 2", "built-in causal + window 2").

    spec: the mask spec the run applies (ui.state's mask_spec: after a custom mask was filled in, or a mask that
    did not fit was dropped). causal_model: a decoder, whose built-in causal mask applies whatever is chosen;
    builtin_window: its sliding window, also built in."""
    spec = (spec or "none").strip().lower()
    parts = [(kind, part.strip()) for kind, part in zip(kinds_of(spec), spec.split("&"), strict=True)]
    words = [part.partition(":")[0] if kind is None else kind.button_words(part) for kind, part in parts]
    if causal_model:
        built_in = "built-in causal" + (f" (window {builtin_window})" if builtin_window else "")
        extra = [w for w, (kind, _) in zip(words, parts, strict=True) if kind is None or not kind.adds_nothing_on_a_decoder()]
        return " + ".join([built_in, *extra])
    return " + ".join(words)


def head_facts(d_model: int, n_heads: int, d_head: int, n_kv_heads: int | None = None) -> str:
    """'d_model = n_heads·d_head = 12·32 = 384', or, when a config sets d_head on its own,
    'd_model 32 · 4 heads × d_head 16 (Q projects to 64)'; then the K/V heads when fewer than the query heads."""
    width = n_heads * d_head
    if width == d_model:
        text = f"d_model = n_heads·d_head = {n_heads}·{d_head} = {d_model}"
    else:
        text = f"d_model {d_model} · {n_heads} heads × d_head {d_head} (Q projects to {width})"
    if n_kv_heads and n_kv_heads < n_heads:
        text += f" · {n_kv_heads} K/V head{'s' if n_kv_heads > 1 else ''} shared by the {n_heads} query heads"
    return text


def describe_scale(scale: float, d_k: int, trained: bool = True) -> str:
    """trained=False for a model with seeded weights (the toy), which has a standard setting but no training."""
    standard = 1 / math.sqrt(d_k)
    usual = "the trained" if trained else "the standard"
    if is_standard_scale(scale, d_k):
        return f"Scores are divided by √d_k = √{d_k} ≈ {math.sqrt(d_k):.2f}, " + (
            "as the model was trained." if trained else "the standard setting.")
    if scale == 1.0:
        return (f"Scaling is off: scores are not divided by √{d_k} ≈ {math.sqrt(d_k):.2f}, so they are that much "
                f"larger and the softmax is peakier (lower entropy, higher max weight).")
    return f"Scores are multiplied by {scale:g} instead of 1/√{d_k} ≈ {standard:.3f} (×{scale / standard:.2f} {usual} scale)."


def describe_effect(spec, scale: float, d_k: int, trained: bool = True) -> str | None:
    """A reminder that a changed setting acts in every layer, so later layers change too."""
    default_scale = is_standard_scale(scale, d_k)
    no_mask = spec in (None, "", "none")
    if default_scale and no_mask:
        return None
    return ("These settings act inside every layer's attention, so each layer's input changes too: "
            f"later layers differ from {'the trained model' if trained else 'the standard run'} by more than this "
            "layer's mask or scale alone.")


def describe_input_embedding(positions: str, has_segment: bool = False, layer_norm: bool = False) -> str:
    """What X is in layer 0 for this model, in words, from its config's positions field (ModelConfig.positions):
    e.g. BERT's LayerNorm(token + position + segment embeddings)."""
    segment = " + segment" if has_segment else ""
    if positions == "none":
        summed = f"token{segment} embeddings alone (this model has no positions)"
    elif positions == "sinusoidal":
        summed = f"token{segment} embeddings + sinusoidal position encodings"
    elif positions == "learned":
        summed = f"token + position{segment} embeddings"
    else:  # rope
        summed = f"token{segment} embeddings (positions enter later, inside attention)"
    return f"LayerNorm({summed})" if layer_norm else summed


def model_input_embedding(model) -> str:
    """describe_input_embedding for a loaded attnviz Model, read from its embedder."""
    emb = model.embedder
    return describe_input_embedding(model.cfg.positions, emb.token_type is not None, emb.ln is not None)
