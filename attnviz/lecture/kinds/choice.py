"""The choice kind: the class picks one of the plan's options; the right answer is the option the plan marks as
`expected` (it must be one of them, word for word)."""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.draw.class_answers import choice_figure
from attnviz.errors import AttnvizError
from attnviz.lecture.kinds.base import (
    PICK,
    AnswerKind,
    AnswerSpec,
    Ask,
    Reveal,
    Right,
    StepRun,
    answers_said,
    counts_table,
    letter,
    unknown_fields,
)

FIELDS = ("options", "expected")
EXAMPLE = 'answer = { kind = "choice", options = ["layer 0", "layer 3"], expected = "layer 3" }'
MAX_OPTIONS = 12
MAX_OPTION_CHARACTERS = 120


@dataclass(frozen=True)
class ChoiceSpec(AnswerSpec):
    options: tuple[str, ...] = ()  # in the plan's order
    expected: str = ""  # the right one: one of the options
    kind: str = "choice"


def parse(where: str, raw: dict) -> ChoiceSpec:
    unknown_fields(where, raw, "choice", FIELDS)
    options = raw.get("options")
    if (not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS
            or not all(isinstance(o, str) and o.strip() for o in options)):
        raise AttnvizError(f"{where}: a choice answer needs answer.options = [\"…\", \"…\"]: 2 to {MAX_OPTIONS} "
                           f"texts, e.g. {EXAMPLE}.")
    options = [o.strip() for o in options]
    if len(set(options)) != len(options):
        raise AttnvizError(f"{where}: answer.options repeats an option.")
    long = next((o for o in options if len(o) > MAX_OPTION_CHARACTERS), None)
    if long is not None:
        raise AttnvizError(f"{where}: answer.options has an option of {len(long)} characters (at most "
                           f"{MAX_OPTION_CHARACTERS}): an option is a few words a student taps; put the reasons in "
                           "explain.")
    expected = raw.get("expected")
    if expected is None:
        raise AttnvizError(f"{where}: a choice answer marks its right option: answer.expected = one of the options, "
                           f"e.g. {EXAMPLE}.")
    if not isinstance(expected, str) or expected.strip() not in options:
        raise AttnvizError(f"{where}: answer.expected must be one of the options, word for word ("
                           + ", ".join(f'"{o}"' for o in options) + f"), not {expected!r}. Put what explains it in "
                           "the step's explain field.")
    return ChoiceSpec(options=tuple(options), expected=expected.strip())


def right(spec: ChoiceSpec, step: StepRun) -> Right:
    return Right(spec.expected, "marked in the plan", spec.expected)


def ask(spec: ChoiceSpec, right: Right) -> Ask:
    # lettered as the projector lists them with the question: a student taps what the lecturer reads out ("B")
    return Ask("**Your answer:** pick one.", PICK, spec.options,
               tuple(f"{letter(i)}. {option}" for i, option in enumerate(spec.options)), lettered=True)


def is_right(spec: ChoiceSpec, right: Right, value: str) -> bool:
    return value == spec.expected


def reveal(spec: ChoiceSpec, right: Right, asked: Ask, values: list[str]) -> Reveal:
    counts = asked.counts(values)
    total = sum(counts)
    got = counts[spec.options.index(spec.expected)]
    headline = (f"**The right answer:** {spec.expected} (marked in the plan)"
                + (f"; {got} of {answers_said(total)} picked it." if total else "; the class gave no answers."))
    # the bars lettered as the buttons and the projector letter the options: the class reads back what it tapped
    lettered = asked.labels[spec.options.index(spec.expected)]
    return Reveal(headline, choice_figure(asked.labels, counts, lettered, "marked in the plan"), "",
                  "lecture_class_choice")


def record_html(spec: ChoiceSpec, right: Right, asked: Ask, values: list[str]) -> str:
    return counts_table(list(spec.options), asked.counts(values), spec.options.index(spec.expected), "option")


CHOICE = AnswerKind("choice", "pick one of the plan's options; the right answer is the option the plan marks",
                    FIELDS, EXAMPLE, parse, right, ask, is_right, reveal, record_html)
