"""What a widget and a saved file both say about what they draw: a title and lines under it, from the input."""

from __future__ import annotations

from attnviz.errors import AttnvizError
from attnviz.notebook.document import document_bytes
from attnviz.notebook.inputs import attention_sets, scale_name


def named(what: str, which) -> str:
    """'layer 2', 'heads 1, 2, 7', or '' for None (all)."""
    if which is None:
        return ""
    if isinstance(which, (list, tuple, range)):
        return f"{what}s {', '.join(map(str, which))}"
    return f"{what} {which}"


def describe(obj, sets, layer=None, heads=None) -> tuple[str, str, list[str]]:
    """(title, subtitle, notes) of a run result or of raw attention."""
    first = sets[0]
    shape = f"{first.n_layers} layers × {first.n_heads} heads"
    shown = [named("layer", layer), named("head", heads)]
    shown = [s for s in shown if s]
    if shown:
        shape += " (shown: " + ", ".join(shown) + ")"
    name = getattr(obj, "model_name", "") or "attention"
    if getattr(obj, "cross_attentions", None) is not None:
        sub = f"{len(obj.source_labels)} source tokens → {len(obj.labels)} target tokens (decoder input)"
    else:
        sub = f"{len(first.row_labels)} tokens"
    if first.scale is not None:
        sub += f" · scores × {scale_name(first.scale, first.d_head)}"
    if first.allowed is not None and not bool(first.allowed.all()):
        masked = int((~first.allowed).sum())
        sub += f" · mask: {masked} of {first.allowed.numel()} query–key pairs masked (−∞)"
    notes = list(getattr(obj, "notes", []) or [])
    return f"{name} · {shape}", sub, notes


def document_of(obj, *, layer=None, heads=None, view="heads", tokens=None, key_tokens=None, scores="auto") -> bytes:
    """The document bytes for show() and save_html(): every check of the input happens here, before anything is drawn."""
    if obj is None:
        raise AttnvizError("Nothing to draw: pass a run result (model.run(...)) or an attention tensor.")
    sets = attention_sets(obj, tokens=tokens, key_tokens=key_tokens)
    title, subtitle, notes = describe(obj, sets, layer, heads)
    return document_bytes(sets, view=view, layer=layer, heads=heads, scores=scores, title=title, subtitle=subtitle,
                          notes=notes)
