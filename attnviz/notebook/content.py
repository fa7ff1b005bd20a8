"""What a widget and a saved file both say about what they draw: a title and lines under it, from the input."""

from __future__ import annotations

from attnviz.draw.describe import scale_name
from attnviz.errors import AttnvizError
from attnviz.notebook.document import document_bytes
from attnviz.notebook.inputs import Drawn, drawn_input


def named(what: str, which) -> str:
    """'layer 2', 'heads 1, 2, 7', or '' for None (all)."""
    if which is None:
        return ""
    if isinstance(which, (list, tuple, range)):
        return f"{what}s {', '.join(map(str, which))}"
    return f"{what} {which}"


def describe(drawn: Drawn, layer=None, heads=None) -> tuple[str, str, list[str]]:
    """(title, subtitle, notes) of what is drawn."""
    first = drawn.sets[0]
    shape = f"{first.n_layers} layers × {first.n_heads} heads"
    shown = [named("layer", layer), named("head", heads)]
    shown = [s for s in shown if s]
    if shown:
        shape += " (shown: " + ", ".join(shown) + ")"
    sub = drawn.counts
    if first.scale is not None:
        sub += f" · scores × {scale_name(first.scale, first.d_head)}"
    if first.allowed is not None and not bool(first.allowed.all()):
        masked = int((~first.allowed).sum())
        sub += f" · mask: {masked} of {first.allowed.numel()} query–key pairs masked (−∞)"
    return f"{drawn.name} · {shape}", sub, list(drawn.notes)


def given_inputs(*, tokens=None, key_tokens=None, encoder_attentions=None, decoder_attentions=None,
                 cross_attentions=None, encoder_tokens=None, decoder_tokens=None, encoder_attention=None,
                 decoder_attention=None, cross_attention=None) -> dict:
    """show()'s and save_html()'s keyword inputs as drawn_input takes them: bertviz's model_view names
    (encoder_attention, decoder_attention, cross_attention) mean transformers' plural ones."""
    pair = {"encoder_attentions": (encoder_attentions, encoder_attention),
            "decoder_attentions": (decoder_attentions, decoder_attention),
            "cross_attentions": (cross_attentions, cross_attention)}
    for plural, (ours, bertviz) in pair.items():
        if ours is not None and bertviz is not None:
            raise AttnvizError(f"{plural}= and {plural[:-1]}= name the same attentions: pass one of them.")
    return {"tokens": tokens, "key_tokens": key_tokens, "encoder_tokens": encoder_tokens,
            "decoder_tokens": decoder_tokens} | {k: a if a is not None else b for k, (a, b) in pair.items()}


def drawn_document(obj=None, *, layer=None, heads=None, view="heads", scores="auto", **given) -> tuple[bytes, str]:
    """(the document bytes for show() and save_html(), the name of what it draws): every check of the input happens
    here, before anything is drawn. given: given_inputs' keywords."""
    drawn = drawn_input(obj, **given_inputs(**given))
    title, subtitle, notes = describe(drawn, layer, heads)
    return document_bytes(drawn.sets, view=view, layer=layer, heads=heads, scores=scores, title=title,
                          subtitle=subtitle, notes=notes), drawn.name


def document_of(obj=None, **kw) -> bytes:
    """The document bytes alone (drawn_document's arguments)."""
    return drawn_document(obj, **kw)[0]
