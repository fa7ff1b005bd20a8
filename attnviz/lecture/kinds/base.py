"""What every answer kind is made of (kinds/__init__.py holds the registry; each kind is one file beside this one).

A kind carries its data (its name, what the class does, an example of its answer table) and its behaviour:

    parse(where, table) -> spec              the plan's answer table checked: every problem names the step and field
    right(spec, step) -> Right               the right answer for the step's own state (step: its run and model)
    ask(spec, right) -> Ask                  what a follower is asked: a pick among labelled options, or a number
    is_right(spec, right, value) -> bool     whether a kept answer is the right one
    reveal(spec, right, ask, values) -> Reveal     what Reveal draws: the right answer in words, a figure, a caption
    record_html(spec, right, ask, values) -> str   the handout's part: the class's answers with the right one marked

A student's answer is checked and read back by its Ask (a pick is one of its options, a number is a number), so a
new kind that asks with a pick or a number needs no code of its own for that. Values are kept in the store as text:
a pick as str(option), a number as Python writes it ("0.25").
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from attnviz.errors import AttnvizError

PICK, NUMBER = "pick", "number"  # the two ways a follower answers (ui/lecture/answers.py draws each)
MAX_NUMBER = 1e9  # a weight, a variance or a count: anything bigger is a typo
MAX_TYPED = 40  # characters of a typed number: more is no number a student means


class StepRun(Protocol):
    """What a kind may read of the step it asks about: its state's run and model (ui/lecture: the step's own state,
    never what a page's widgets hold at the moment)."""

    model_spec: str

    @property
    def model(self) -> Any: ...

    def run(self) -> Any: ...


@dataclass(frozen=True)
class AnswerSpec:
    """A step's answer table, parsed by its kind (each kind's spec adds its own fields)."""

    kind: str = ""


@dataclass(frozen=True)
class Right:
    """The right answer to a step's question, for the step's state."""

    text: str  # as the class reads it: "'animal' (token 2), weight 0.68", "with attention", "2"
    source: str  # where it comes from: "the model's largest weight, layer 3, head 1", "marked in the plan", ...
    value: Any = None  # the kind's own: the model's row, the option, the number


@dataclass(frozen=True)
class Ask:
    """What a follower is asked: a pick among options (labels: what each shows), or a number."""

    prompt: str  # markdown, above the input
    widget: str  # PICK or NUMBER
    options: tuple = ()  # PICK: the values (kept as str(option))
    labels: tuple[str, ...] = ()  # PICK: what each option shows
    said: tuple[str, ...] = ()  # PICK: how a picked option is read back ("'dog' (token 2)"); default its label
    lettered: bool = False  # PICK: the labels are the options lettered A, B, C… (letter()), listed with the question

    def check(self, raw: object) -> str:
        """A student's answer as the store keeps it, or an AttnvizError saying what is allowed."""
        text = str(raw if raw is not None else "").strip()
        if self.widget == PICK:
            kept = [str(option) for option in self.options]
            if text not in kept:
                raise AttnvizError("Pick one of: " + ", ".join(self.labels) + ".")
            return text
        if not text:  # Enter (or Send) on an empty box
            raise AttnvizError("Type a number first, such as 0.25 or 12, then press Enter or Send.")
        if len(text) > MAX_TYPED:
            raise AttnvizError(f"That number has {len(text):,} characters: give one between -{MAX_NUMBER:g} and "
                               f"{MAX_NUMBER:g}, such as 0.25 or 12.")
        if text.count(",") == 1 and "." not in text:  # a decimal comma: a phone's keypad in a language that writes 0,25
            whole, part = text.split(",")
            if re.fullmatch(r"[-+]?0*[1-9]\d{0,2}", whole) and re.fullmatch(r"\d{3}", part):
                raise AttnvizError(f"'{text}' may be a thousands comma or a decimal one: write {whole}{part} or "
                                   f"{whole}.{part}.")
            text = f"{whole}.{part}"
        try:
            number = float(text)
        except (ValueError, OverflowError):
            raise AttnvizError(f"'{text[:30]}' is not a number: type one such as 0.25 or 12.") from None
        if not abs(number) <= MAX_NUMBER:  # also refuses nan and inf
            raise AttnvizError(f"Give a number between -{MAX_NUMBER:g} and {MAX_NUMBER:g}.")
        return repr(number)

    def shown(self, value: str) -> str:
        """A kept answer as a student reads it back."""
        if self.widget == PICK:
            kept = [str(option) for option in self.options]
            return (self.said or self.labels)[kept.index(value)] if value in kept else value
        try:
            return f"{float(value):g}"
        except ValueError:
            return value

    def counts(self, values: list[str]) -> list[int]:
        """PICK: how many students picked each option, in the options' order (a value that is no option, kept for
        another plan or sentence, is not counted)."""
        return [sum(v == str(option) for v in values) for option in self.options]

    def option_of(self, value: str | None):
        """PICK: the option a kept value names (None when none does)."""
        return next((option for option in self.options if str(option) == value), None)


def letter(index: int) -> str:
    """An option's letter, as the projector, the phones and the notes show it: A, B, C…"""
    return chr(ord("A") + index)


def numbers(values: list[str]) -> list[float]:
    """The class's numbers (a value that is not one, kept by an older plan, is left out)."""
    out = []
    for value in values:
        try:
            number = float(value)
        except ValueError:
            continue
        if math.isfinite(number):
            out.append(number)
    return out


@dataclass(frozen=True)
class RowsFigure:
    """Rows over the same columns, drawn as the app's heatmap (the class's share above the model's weights)."""

    values: Any  # (n_rows, n_columns) float
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    axis_words: tuple[str, str] = ("row", "column")
    value_name: tuple[str, str] = ("value", "value")
    right_column: int | None = None  # the column of the right answer, marked


@dataclass(frozen=True)
class Reveal:
    """What Reveal draws for a question: the right answer in words, the class's answers as a figure, a caption."""

    headline: str  # markdown: "**The right answer:** 'animal' (token 2) — the model's largest weight, ..."
    figure: Any  # a plotly Figure, or a RowsFigure
    caption: str = ""
    key: str = "lecture_class"  # the figure's widget key


@dataclass(frozen=True)
class AnswerKind:
    """One kind of answer: its data and its behaviour (the module docstring says what each function does)."""

    name: str
    words: str  # what the class does, for the docs and the Lecture page: "tap the key token the query looks at most"
    fields: tuple[str, ...]  # the answer table's fields besides kind
    example: str  # an answer table of this kind, as a plan writes it
    parse: Callable[[str, dict], AnswerSpec]
    right: Callable[[AnswerSpec, StepRun], Right]
    ask: Callable[[AnswerSpec, Right], Ask]
    is_right: Callable[[AnswerSpec, Right, str], bool]
    reveal: Callable[[AnswerSpec, Right, Ask, list[str]], Reveal]
    record_html: Callable[[AnswerSpec, Right, Ask, list[str]], str]


# ---- what the kinds share --------------------------------------------------------------------------------------

def unknown_fields(where: str, raw: dict, kind: str, fields: tuple[str, ...]) -> None:
    """An answer table's fields that its kind does not take, refused by name."""
    unknown = sorted(set(raw) - {"kind", *fields})
    if unknown:
        raise AttnvizError(f"{where}: answer has unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                           f"for kind = \"{kind}\". It may have: kind, {', '.join(fields)}.")


def text_field(where: str, raw: dict, field: str) -> str:
    """An optional text field ("" when absent)."""
    value = raw.get(field, "")
    if not isinstance(value, str):
        raise AttnvizError(f"{where}: answer.{field} must be text (in quotes), not {value!r}.")
    return value.strip()


def whole_field(where: str, raw: dict, field: str, low: int, high: int, what: str) -> int | None:
    """An optional whole number in low..high (None when absent); a bool or a float is refused."""
    value = raw.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AttnvizError(f"{where}: answer.{field} is {what}: a whole number from {low} to {high}.")
    return value


def number_field(where: str, raw: dict, field: str, what: str) -> float | None:
    """An optional number (None when absent); text, a bool, nan or inf is refused."""
    value = raw.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or abs(value) > MAX_NUMBER:
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        raise AttnvizError(f"{where}: answer.{field} must be {what}, written as a bare number (no quotes, no "
                           f"words), not {shown}. Put what explains it in the step's explain field.")
    return float(value)


def bare(token: str) -> str:
    """A token as a person types it: without the tokenizers' word marks (Ġ, ▁, ##) and case."""
    return token.replace("Ġ", "").replace("▁", "").replace("##", "").strip().lower()


def token_position(text: str, tokens: tuple[str, ...] | list[str], role: str) -> int:
    """The first token that reads as `text` (bare: without marks and case). AttnvizError when none does."""
    for position, token in enumerate(tokens):
        if bare(token) == bare(text):
            return position
    raise AttnvizError(f"The plan's {role} token '{text}' is not in this sentence's tokens.")


def answers_said(n: int) -> str:
    """'1 answer', '3 answers', 'no answers'."""
    return "no answers" if n == 0 else f"{n} answer" + ("" if n == 1 else "s")


def bar(count: int, most: int) -> str:
    """A count as a bar in the handout (the count itself is printed beside it)."""
    return f'<span class="bar" style="width: {12 * count / max(most, 1):.2f}rem"></span>'


def counts_table(labels: list[str], counts: list[int], right: int | None, heading: str = "answer",
                 extra: list[str] | None = None, extra_heading: str = "") -> str:
    """The handout's table of the class's answers: one row per option, its count and bar, the right one marked."""
    esc = html.escape
    most = max(counts, default=0)
    head = f"<tr><th>{esc(heading)}</th><th>students</th><th></th>" + (f"<th>{esc(extra_heading)}</th>" if extra else "")
    rows = []
    for i, (label, count) in enumerate(zip(labels, counts, strict=True)):
        mark = ' class="right"' if i == right else ""
        tick = " ✓ right answer" if i == right else ""
        cells = f"<td{mark}>{esc(label)}{tick}</td><td>{count}</td><td>{bar(count, most)}</td>"
        if extra:
            cells += f"<td>{esc(extra[i])}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f'<table class="answers">{head}</tr>{"".join(rows)}</table>'
