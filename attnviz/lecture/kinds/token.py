"""The token kind: the class taps the key token that a query token looks at most; the right answer is the model's
largest weight in that query's row, at the layer and head (or heads, averaged) the plan names, for the step's
state. The plan names all three, so the row is the same on the projector, the phones, the notes and the handout,
whatever the page's own pickers hold."""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds.base import (
    PICK,
    AnswerKind,
    AnswerSpec,
    Ask,
    Reveal,
    Right,
    RowsFigure,
    StepRun,
    answers_said,
    counts_table,
    text_field,
    token_position,
    unknown_fields,
    whole_field,
)

FIELDS = ("query", "layer", "head", "heads")
EXAMPLE = 'answer = { kind = "token", query = "it", layer = 3, head = 1 }'
MAX_LAYER = MAX_HEAD = 999
MAX_HEADS = 64


@dataclass(frozen=True)
class TokenSpec(AnswerSpec):
    query: str = ""  # the query token's text (its first occurrence in the step's sentence)
    layer: int = 0
    heads: tuple[int, ...] = ()  # one head, or several: the mean of their rows
    kind: str = "token"


@dataclass(frozen=True)
class TokenRow:
    """The model's row the question is about."""

    tokens: tuple[str, ...]
    query: int  # the query token's position
    row: np.ndarray  # (n_keys,) attention weights after softmax (the mean over the heads when several)
    what: str  # "layer 3, head 1" or "layer 3, the mean of heads 0, 2 and 5"

    @property
    def best(self) -> int:
        return int(np.argmax(self.row))


def heads_said(layer: int, heads: tuple[int, ...]) -> str:
    """Which row, in words: one head's, or the mean of several heads' rows (each sums to 1, so does their mean)."""
    if len(heads) == 1:
        return f"layer {layer}, head {heads[0]}"
    named = ", ".join(map(str, heads[:-1])) + f" and {heads[-1]}"
    return f"layer {layer}, the mean of heads {named}"


def parse(where: str, raw: dict) -> TokenSpec:
    unknown_fields(where, raw, "token", FIELDS)
    query = text_field(where, raw, "query")
    layer = whole_field(where, raw, "layer", 0, MAX_LAYER, "the layer whose row is the model's answer")
    head = whole_field(where, raw, "head", 0, MAX_HEAD, "the head whose row is the model's answer")
    heads = raw.get("heads")
    if heads is not None:
        if head is not None:
            raise AttnvizError(f"{where}: answer.head and answer.heads: give one head, or heads = [...] for the mean "
                               "of several, not both.")
        if (not isinstance(heads, list) or not 2 <= len(heads) <= MAX_HEADS or len(set(heads)) != len(heads)
                or not all(isinstance(h, int) and not isinstance(h, bool) and 0 <= h <= MAX_HEAD for h in heads)):
            raise AttnvizError(f"{where}: answer.heads is a list of 2 to {MAX_HEADS} different head numbers, e.g. "
                               "heads = [0, 2, 5]: the model's answer is then the mean of their rows.")
    missing = [name for name, value in (("query", query), ("layer", layer), ("head", head if heads is None else 0))
               if value in ("", None)]
    if missing:
        raise AttnvizError(f"{where}: a token question names the one row of the model it asks about: answer.query "
                           "(the query token, as written in the sentence), answer.layer and answer.head (or "
                           f"answer.heads = [...] for the mean of several heads), e.g. {EXAMPLE}. Missing: "
                           f"{', '.join('answer.' + m for m in missing)}.")
    return TokenSpec(query=query, layer=layer, heads=tuple(heads) if heads is not None else (head,))


def row_of(spec: TokenSpec, step: StepRun) -> TokenRow:
    """The model's row for the step's state (the step's run). AttnvizError when the model has no such layer or head,
    or the sentence no such query token."""
    res = step.run()
    tokens = tuple(res.tokens)
    n_layers, n_heads = res.attentions.shape[:2]
    if spec.layer >= n_layers or max(spec.heads) >= n_heads:
        raise AttnvizError(f"The plan asks for {heads_said(spec.layer, spec.heads)}; this model has layers 0 to "
                           f"{n_layers - 1} and heads 0 to {n_heads - 1}.")
    query = token_position(spec.query, tokens, "query")
    weights = res.attentions[spec.layer, list(spec.heads), query, :]  # (heads, n_keys)
    row = weights.float().mean(dim=0).numpy()  # (n_keys,) one head's row is itself
    return TokenRow(tokens, query, row, heads_said(spec.layer, spec.heads))


def right(spec: TokenSpec, step: StepRun) -> Right:
    found = row_of(spec, step)
    best = found.best
    return Right(f"'{found.tokens[best]}' (token {best}), weight {found.row[best]:.2f}",
                 f"the model's largest weight in the row of '{found.tokens[found.query]}' (token {found.query}), "
                 f"{found.what}", found)


def ask(spec: TokenSpec, right: Right) -> Ask:
    found: TokenRow = right.value
    return Ask(f"**Your prediction:** which key token does **'{found.tokens[found.query]}'** (token {found.query}) "
               f"look at most, in {found.what}? Tap it.", PICK, tuple(range(len(found.tokens))), found.tokens,
               tuple(f"'{t}' (token {i})" for i, t in enumerate(found.tokens)))


def is_right(spec: TokenSpec, right: Right, value: str) -> bool:
    return value == str(right.value.best)


def reveal(spec: TokenSpec, right: Right, asked: Ask, values: list[str]) -> Reveal:
    found: TokenRow = right.value
    counts = asked.counts(values)
    total = sum(counts)
    query, best = found.tokens[found.query], found.best
    picked = ", ".join(f"'{found.tokens[i]}' {c}" for i, c in enumerate(counts) if c)
    # the right answer first: on a projector these words head the column beside the figure
    headline = (f"**The right answer:** **'{found.tokens[best]}' (token {best}), {found.row[best]:.2f}**, the largest "
                f"weight of '{query}' (token {found.query}) in the model ({found.what})"
                + (f"; {counts[best]} of {total} picked it." if total else "; the class gave no answers."))
    # the rows named "class" and "model", not "top row": a phone draws them one above the other, a projector prints
    # them as columns of a table (ui/lecture/beside.py)
    lead = f"The class ({answers_said(total)}) and the model ({found.what}). "
    model_said = (f"model: the model's attention weights of '{query}' ({found.what}); its largest: "
                  f"'{found.tokens[best]}' (token {best}), {found.row[best]:.2f}.")
    if not total:  # a share of no answers is no share: 0.00 under every token read as "nobody picked it"
        return Reveal(headline, RowsFigure(found.row.astype(np.float32)[None, :], ("model",), found.tokens,
                                           ("row", "key token"), ("weight", "value"), best),
                      f"{lead}The class gave no answers, so only the model's row is drawn. {model_said}",
                      "lecture_class_row")
    share = np.asarray(counts, dtype=np.float32) / total  # (n_keys,)
    rows = np.stack([share, found.row.astype(np.float32)])  # (2, n_keys)
    caption = f"{lead}class ({total}): the class's share of answers per key token ({picked}). {model_said}"
    figure = RowsFigure(rows, (f"class ({total})", "model"), found.tokens, ("row", "key token"),
                        ("share / weight", "value"), best)
    return Reveal(headline, figure, caption, "lecture_class_row")


def record_html(spec: TokenSpec, right: Right, asked: Ask, values: list[str]) -> str:
    found: TokenRow = right.value
    esc = html.escape
    counts = asked.counts(values)
    return (f"<p>Query '{esc(found.tokens[found.query])}' (token {found.query}); the model's row: {esc(found.what)}."
            "</p>" + counts_table(list(found.tokens), counts, found.best, "key token",
                                  [f"{w:.2f}" for w in found.row], "model's weight"))


TOKEN = AnswerKind("token", "tap the key token a query token looks at most; the right answer is the model's largest "
                   "weight in that row", FIELDS, EXAMPLE, parse, right, ask, is_right, reveal, record_html)
