"""The kinds of answer a lecture step's question can take from the class, one home for each:

    answer = { kind = "token" }                                  # tap the key token the query looks at most
    answer = { kind = "token", query = "it" }                    # ... for this query token (its first occurrence)
    answer = { kind = "choice", options = ["layer 0", "layer 3"] }
    answer = { kind = "number" }                                 # a weight, a variance, a count

A kind says how the plan writes it (parsed here, every problem named with its step and field).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.errors import AttnvizError

KINDS = ("token", "choice", "number")
ANSWER_KEYS = ("kind", "options", "query")
MAX_OPTIONS = 12


@dataclass(frozen=True)
class AnswerSpec:
    """What a step's question asks the class for."""

    kind: str  # one of KINDS
    options: tuple[str, ...] = ()  # choice: the options, in the plan's order
    query: str = ""  # token: the query token whose row the class predicts ("" = the page's selected query)


def parse_answer(where: str, raw: object) -> AnswerSpec | None:
    """A step's `answer` table, checked (None when the step has none)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise AttnvizError(f'{where}: answer must be a table, e.g. answer = {{ kind = "token" }}.')
    unknown = sorted(set(raw) - set(ANSWER_KEYS))
    if unknown:
        raise AttnvizError(f"{where}: answer has unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}. "
                           f"It may have: {', '.join(ANSWER_KEYS)}.")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise AttnvizError(f"{where}: answer.kind must be one of {', '.join(map(repr, KINDS))}, not {kind!r}.")
    options = raw.get("options", [])
    if kind == "choice":
        if (not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS
                or not all(isinstance(o, str) and o.strip() for o in options)):
            raise AttnvizError(f"{where}: a choice answer needs options = [\"…\", \"…\"]: 2 to {MAX_OPTIONS} texts.")
        if len({o.strip() for o in options}) != len(options):
            raise AttnvizError(f"{where}: answer.options repeats an option.")
    elif "options" in raw:
        raise AttnvizError(f"{where}: answer.options belongs to kind = \"choice\" only.")
    query = raw.get("query", "")
    if not isinstance(query, str) or (query and kind != "token"):
        raise AttnvizError(f"{where}: answer.query is a token's text, for kind = \"token\" only.")
    return AnswerSpec(kind, tuple(o.strip() for o in options), query.strip())
