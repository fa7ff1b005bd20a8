"""A lecture plan: its steps in order, read from a TOML file and checked against the app's pages.

The file (attnviz/assets/lectures/attention.toml is the default; docs/lecture-plans.md is the reference):

    title = "Attention, from why to how"
    [[step]]
    title = "Who does 'it' look at?"                  # required
    page = "/"                                        # required: a page's URL path ("/" is the explorer)
    state = { text = "The animal didn't cross the street because it was too tired.", layer = 3 }
                                                      # the page's URL parameters: strings, numbers, booleans, or
                                                      # lists of them (repeated parameters, e.g. heads)
    notes = "What to say."                            # presenter notes
    question = "Which token will 'it' look at most?"  # asked before revealing; needs an answer and a focus
    answer = { kind = "token", query = "it", layer = 3, head = 1 }   # what the class answers with, and the right
                                                      # answer (attnviz/lecture/kinds/: token, choice, number)
    explain = "Why the right answer is right."        # at Reveal, with the focus figure; and in the handout
    predict_first = true                              # the page's figures stay hidden until Reveal
    focus = "head"                                    # the figure that answers the question (ids: each page's own)
    minutes = 3                                       # the time planned for this step

Every problem is an AttnvizError whose message names the step (1-based, as the lecture counts) and the field,
so a lecturer can fix the file without reading a traceback.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds import AnswerSpec, parse_answer

MAX_BYTES = 200_000  # a plan is a page of text: a bigger upload is a wrong file
MAX_STEPS = 200
PLAN_KEYS = ("title", "description", "step")
STEP_KEYS = ("title", "page", "state", "notes", "question", "answer", "explain", "predict_first", "focus", "minutes")
MAX_MINUTES = 180
RESERVED = ("present", "lecture", "step", "room", "key", "fig")  # set by the lecture itself (attnviz.lecture.links)
KEY_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Step:
    """One step of a lecture: a page of the app in a given state, and what the lecturer says over it."""

    title: str
    page: str  # the page's URL path without its slash: "" is the default page (the explorer)
    state: tuple[tuple[str, str], ...]  # the URL parameters, as (key, value) pairs; a list repeats its key
    notes: str = ""
    question: str = ""
    predict_first: bool = False  # hide the page's figures until the lecturer reveals them
    explain: str = ""  # why the right answer is right (at Reveal), or what a step that asks nothing shows (at once)
    minutes: float | None = None  # the time planned for the step
    focus: str = ""  # the id of the figure that answers the question: first on a projector after Reveal
    answer: AnswerSpec | None = None  # what the class answers with, and the right answer (a question has one)


@dataclass(frozen=True)
class Plan:
    title: str
    steps: tuple[Step, ...]
    description: str = ""

    def step(self, number: int) -> Step:
        """Step `number`, counted from 1 as the lecture shows it; clamped into 1..N."""
        return self.steps[min(max(number, 1), len(self.steps)) - 1]


def load_plan(path: str | Path, pages: dict[str, str]) -> Plan:
    """The plan in this TOML file, checked against the app's pages (url_path -> title; "" = the default page)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise AttnvizError(f"Cannot read the lecture plan {path.name}: {err.strerror or err}.") from None
    return parse_plan(data, pages)


def parse_plan(data: bytes | str, pages: dict[str, str]) -> Plan:
    """The plan these TOML bytes describe, checked against the app's pages (url_path -> title)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_BYTES:
        raise AttnvizError(f"This lecture plan is {len(raw):,} bytes; a plan may have at most {MAX_BYTES:,}. "
                           "Is it the right file?")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AttnvizError("This lecture plan is not UTF-8 text. Save it as a UTF-8 .toml file.") from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise AttnvizError(f"This lecture plan is not valid TOML: {err}.") from None
    unknown = sorted(set(table) - set(PLAN_KEYS))
    if unknown:
        raise AttnvizError(f"The lecture plan has unknown top-level keys: {', '.join(unknown)}. "
                           f"Allowed: {', '.join(PLAN_KEYS)}. (A step's fields belong under [[step]].)")
    title = table.get("title", "")
    if not isinstance(title, str) or not title.strip():
        raise AttnvizError('The lecture plan needs a title: a line title = "…" at the top.')
    description = table.get("description", "")
    if not isinstance(description, str):
        raise AttnvizError("The lecture plan's description must be text.")
    steps = table.get("step")
    if not isinstance(steps, list) or not steps:
        raise AttnvizError("The lecture plan has no steps: add [[step]] tables, each with a title and a page.")
    if len(steps) > MAX_STEPS:
        raise AttnvizError(f"The lecture plan has {len(steps)} steps; a plan may have at most {MAX_STEPS}.")
    return Plan(title.strip(), tuple(parse_step(i + 1, s, pages) for i, s in enumerate(steps)), description.strip())


def parse_step(number: int, raw: object, pages: dict[str, str]) -> Step:
    """Step `number` (1-based) of a plan, checked: every message names the step and the field."""
    if not isinstance(raw, dict):
        raise AttnvizError(f"Step {number} is not a table: write it as a [[step]] table with a title and a page.")
    named = raw.get("title")
    where = f"Step {number}" + (f' ("{named.strip()}")' if isinstance(named, str) and named.strip() else "")
    if "expected" in raw:
        raise AttnvizError(f"{where}: expected belongs in the answer table now, as the right answer the kind checks "
                           '(answer = { kind = "choice", options = ["a", "b"], expected = "b" }, or a bare number for '
                           'kind = "number"); the words that explain it go in explain = "…".')
    unknown = sorted(set(raw) - set(STEP_KEYS))
    if unknown:
        raise AttnvizError(f"{where} has unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}. "
                           f"A step may have: {', '.join(STEP_KEYS)}.")
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        raise AttnvizError(f"{where} has no title: every step needs title = \"…\".")
    page = raw.get("page")
    if not isinstance(page, str):
        raise AttnvizError(f"{where} has no page: give its URL path, e.g. page = \"/step_by_step\" (\"/\" is the "
                           "explorer).")
    path = page.strip().strip("/")
    if path not in pages:
        known = ", ".join("/" + p for p in pages)
        raise AttnvizError(f'{where}: page "{page}" is not a page of this app. The pages are: {known}.')
    texts = {}
    for field in ("notes", "question", "explain"):
        value = raw.get(field, "")
        if not isinstance(value, str):
            raise AttnvizError(f"{where}: {field} must be text (in quotes), not {type_name(value)}.")
        texts[field] = value.strip()
    predict = raw.get("predict_first", False)
    if not isinstance(predict, bool):
        raise AttnvizError(f"{where}: predict_first must be true or false, not {type_name(predict)}.")
    if predict and not texts["question"]:
        raise AttnvizError(f"{where}: predict_first = true needs a question to ask before the reveal.")
    minutes = raw.get("minutes")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float))
                                or not 0 < minutes <= MAX_MINUTES):
        raise AttnvizError(f"{where}: minutes must be a number of minutes above 0 and at most {MAX_MINUTES}.")
    focus = raw.get("focus", "")
    if not isinstance(focus, str) or (focus and not KEY_PATTERN.fullmatch(focus)):
        raise AttnvizError(f"{where}: focus must be a figure's id (letters, digits, _), as its page documents.")
    answer = parse_answer(where, raw.get("answer"))
    if answer is not None and not texts["question"]:
        raise AttnvizError(f"{where}: an answer needs a question to answer.")
    if texts["question"] and answer is None:
        raise AttnvizError(f"{where}: a question needs an answer table: what the class answers with and the right "
                           'answer, e.g. answer = { kind = "choice", options = ["yes", "no"], expected = "no" } (an '
                           "open question for discussion belongs in notes).")
    if texts["question"] and not focus:
        raise AttnvizError(f"{where}: a question names the figure that answers it: focus = \"<figure id>\" (each "
                           "page's ids are in docs/lecture-plans.md); the projector shows it first at Reveal.")
    return Step(title.strip(), path, parse_state(where, raw.get("state", {})), texts["notes"], texts["question"],
                predict, texts["explain"], None if minutes is None else float(minutes), focus, answer)


def parse_state(where: str, state: object) -> tuple[tuple[str, str], ...]:
    """A step's URL state as (key, value) pairs in URL spelling (a list repeats its key; true/false for booleans)."""
    if not isinstance(state, dict):
        raise AttnvizError(f"{where}: state must be a table of URL parameters, e.g. state = {{ text = \"…\", "
                           f"layer = 2 }}, not {type_name(state)}.")
    pairs = []
    for key, value in state.items():
        if not KEY_PATTERN.fullmatch(key):
            raise AttnvizError(f'{where}: state key "{key}" is not a URL parameter name (letters, digits, _).')
        if key in RESERVED:
            raise AttnvizError(f"{where}: state key \"{key}\" is set by the lecture itself; leave it out.")
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, bool):
                pairs.append((key, "true" if v else "false"))
            elif isinstance(v, (str, int, float)):
                pairs.append((key, str(v)))
            else:
                raise AttnvizError(f"{where}: state.{key} must be text, a number, true/false or a list of them, "
                                   f"not {type_name(v)}.")
    return tuple(pairs)


def type_name(value: object) -> str:
    """How a TOML value's type reads in a message."""
    kinds = {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list", dict: "a table"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), "a date or time")
