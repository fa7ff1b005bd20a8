"""The number kind: the class types a number; the right answer is the plan's `expected` number (within its
`tolerance`), or a `quantity` that attnviz computes for the step's state (quantities.py)."""

from __future__ import annotations

import html
from dataclasses import dataclass

from attnviz.draw.class_answers import number_figure
from attnviz.errors import AttnvizError
from attnviz.lecture.kinds.base import (
    NUMBER,
    AnswerKind,
    AnswerSpec,
    Ask,
    Reveal,
    Right,
    StepRun,
    answers_said,
    number_field,
    numbers,
    text_field,
    unknown_fields,
    whole_field,
)
from attnviz.lecture.kinds.quantities import QUANTITIES

FIELDS = ("expected", "tolerance", "quantity", "query", "key", "layer", "head", "d_k")
EXAMPLE = 'answer = { kind = "number", expected = 1, tolerance = 0.01 }'
MAX_D_K = 4096


@dataclass(frozen=True)
class NumberSpec(AnswerSpec):
    expected: float | None = None  # the plan's right number (None: the quantity's)
    tolerance: float = 0.0  # an answer this close to the right number is right
    quantity: str = ""  # what attnviz computes as the right number (a key of QUANTITIES)
    query: str = ""  # quantity "weight": the query and key tokens' texts, its layer and head
    key: str = ""
    layer: int | None = None
    head: int | None = None
    d_k: int | None = None  # quantities "dot_variance", "dot_spread": the width of q and k
    kind: str = "number"


def parse(where: str, raw: dict) -> NumberSpec:
    unknown_fields(where, raw, "number", FIELDS)
    expected = number_field(where, raw, "expected", "the right number")
    tolerance = number_field(where, raw, "tolerance", "how far from the right number an answer may be and count "
                                                     "as right (0 or more)")
    if tolerance is not None and tolerance < 0:
        raise AttnvizError(f"{where}: answer.tolerance must be 0 or more, not {tolerance:g}.")
    quantity = text_field(where, raw, "quantity")
    if quantity and quantity not in QUANTITIES:
        raise AttnvizError(f"{where}: answer.quantity is one of {', '.join(map(repr, QUANTITIES))}, not {quantity!r}.")
    if (expected is None) == (not quantity):
        raise AttnvizError(f"{where}: a number answer gives its right number as answer.expected (a bare number, "
                           "with an optional answer.tolerance) or names answer.quantity, the number attnviz computes "
                           f"for the step: {'not both' if quantity else 'one of them'}. E.g. {EXAMPLE}.")
    needs = QUANTITIES[quantity].needs if quantity else ()
    spec = NumberSpec(expected=expected, tolerance=tolerance or 0.0, quantity=quantity,
                      query=text_field(where, raw, "query"), key=text_field(where, raw, "key"),
                      layer=whole_field(where, raw, "layer", 0, 999, "a layer number"),
                      head=whole_field(where, raw, "head", 0, 999, "a head number"),
                      d_k=whole_field(where, raw, "d_k", 1, MAX_D_K, "the width of q and k"))
    for field in ("query", "key", "layer", "head", "d_k"):
        given = getattr(spec, field) not in ("", None)
        if given and field not in needs:
            raise AttnvizError(f"{where}: answer.{field} belongs to a quantity that needs it ("
                               + ", ".join(q.name for q in QUANTITIES.values() if field in q.needs) + "), not to "
                               + (f'quantity = "{quantity}".' if quantity else "a number given as expected."))
        if not given and field in needs:
            raise AttnvizError(f"{where}: quantity = \"{quantity}\" needs answer.{' and answer.'.join(needs)}: "
                               f"{QUANTITIES[quantity].words}.")
    return spec


def right(spec: NumberSpec, step: StepRun) -> Right:
    within = f" ± {spec.tolerance:g}" if spec.tolerance else ""  # "512 ± 50 (marked in the plan)": no brackets in brackets
    if not spec.quantity:
        return Right(f"{spec.expected:g}{within}", "marked in the plan", spec.expected)
    value, what = QUANTITIES[spec.quantity].compute(spec, step)
    return Right(f"{value:.4g}{within}", f"computed by attnviz: {what}", value)


def ask(spec: NumberSpec, right: Right) -> Ask:
    return Ask("**Your answer:** type a number, then Enter or Send.", NUMBER)


def is_right(spec: NumberSpec, right: Right, value: str) -> bool:
    got = numbers([value])
    # a right number written to the plan's precision: 1e-9 of its size is float rounding, not a wrong answer
    return bool(got) and abs(got[0] - right.value) <= spec.tolerance + 1e-9 * max(1.0, abs(right.value))


def reveal(spec: NumberSpec, right: Right, asked: Ask, values: list[str]) -> Reveal:
    got = numbers(values)
    hits = sum(is_right(spec, right, v) for v in values)
    source = "marked in the plan" if not spec.quantity else "computed"
    headline = (f"**The right answer:** {right.text} ({right.source})"
                + (f"; {hits} of {answers_said(len(got))} {'within it' if spec.tolerance else 'gave it'}."
                   if got else "; the class gave no answers."))
    caption = (f"The dashed green line marked ✓ right answer, {right.value:.4g}, is computed now by attnviz: "
               f"{right.source.split(': ', 1)[1]}." if spec.quantity else
               f"The dashed green line marked ✓ right answer is the plan's right answer ({right.value:g}), written by "
               "the lecturer, not computed.")
    return Reveal(headline, number_figure(got, right.value, source, spec.tolerance), caption, "lecture_class_number")


def record_html(spec: NumberSpec, right: Right, asked: Ask, values: list[str]) -> str:
    got = sorted(numbers(values))
    listed = ", ".join(f"{v:g}" for v in got) or "none"
    hits = sum(is_right(spec, right, v) for v in values)
    return (f"<p>The class's numbers, smallest first: {html.escape(listed)}"
            + (f" ({hits} of {len(got)} right)." if got else ".") + "</p>")


NUMBER_KIND = AnswerKind("number", "type a number; the right answer is the plan's number (within its tolerance) or "
                         "one that attnviz computes for the step", FIELDS, EXAMPLE, parse, right, ask, is_right,
                         reveal, record_html)
