"""The one registry of lecture answer kinds (what a step's question takes from the class), as the mask kinds'
(attnviz/engine/mask_kinds.py): each kind is one entry carrying its data and its behaviour (base.py says what).

    answer = { kind = "token", query = "it", layer = 3, head = 1 }        # token.py
    answer = { kind = "choice", options = ["a", "b"], expected = "b" }    # choice.py
    answer = { kind = "number", expected = 1, tolerance = 0.01 }          # number.py
    answer = { kind = "number", quantity = "dot_variance", d_k = 512, tolerance = 60 }   # quantities.py

Everything that asks, checks, tallies, marks or records an answer (the plan's loader, the follower's answer box,
Reveal on every screen, the presenter notes, the handout) looks its kind up here and branches on no kind's name,
so a new kind is one file and one line below (or one call to `register_answer_kind`).
"""

from __future__ import annotations

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds.base import NUMBER, PICK, AnswerKind, AnswerSpec, Ask, Reveal, Right, RowsFigure, StepRun
from attnviz.lecture.kinds.choice import CHOICE
from attnviz.lecture.kinds.number import NUMBER_KIND
from attnviz.lecture.kinds.token import TOKEN

KINDS: dict[str, AnswerKind] = {kind.name: kind for kind in (TOKEN, CHOICE, NUMBER_KIND)}

__all__ = ["KINDS", "NUMBER", "PICK", "AnswerKind", "AnswerSpec", "Ask", "Reveal", "Right", "RowsFigure", "StepRun",
           "answer_kind", "parse_answer", "register_answer_kind"]


def register_answer_kind(kind: AnswerKind) -> None:
    """Add a kind (a plan may name it from now on). ValueError when its name is taken."""
    if kind.name in KINDS:
        raise ValueError(f"The answer kind '{kind.name}' is already registered.")
    KINDS[kind.name] = kind


def answer_kind(spec: AnswerSpec) -> AnswerKind:
    """The kind of a parsed answer."""
    return KINDS[spec.kind]


def parse_answer(where: str, raw: object) -> AnswerSpec | None:
    """A step's `answer` table checked by its kind (None when the step has none); every problem is an AttnvizError
    naming the step (where) and the field."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise AttnvizError(f'{where}: answer must be a table, e.g. answer = {{ kind = "number", expected = 1 }}.')
    kind = raw.get("kind")
    if kind not in KINDS:
        raise AttnvizError(f"{where}: answer.kind must be one of {', '.join(map(repr, KINDS))}, not {kind!r}.")
    return KINDS[kind].parse(where, raw)
