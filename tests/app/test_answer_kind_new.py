"""A new lecture answer kind is one entry in the registry (attnviz/lecture/kinds/): defined here, in the test, and
registered, a plan may name it, a follower answers it, Reveal draws it with its right answer on the projector and the
phones, the notes say its right answer and the record keeps it, with no other change. In the app a new kind is its
file in kinds/ and its line in kinds/__init__.py: two source files, since no other file branches on a kind's name."""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, class_table, page_text, run_app

from attnviz.draw.class_answers import choice_figure
from attnviz.errors import AttnvizError
from attnviz.lecture import parse_plan, step_query
from attnviz.lecture.kinds import KINDS, PICK, AnswerKind, AnswerSpec, Ask, Reveal, Right, register_answer_kind
from attnviz.lecture.kinds.base import counts_table, unknown_fields
from ui.lecture.room_record import room_record
from ui.lecture.store import lecture_store

ROOT = Path(__file__).resolve().parents[2]
FILES = {path: file for file, path, _ in app_menu()}
PLAN_ID = "utestverdict"
PLAN = '''title = "True or false"
[[step]]
title = "A claim about the causal mask"
page = "/masks_lab"
state = { text = "The cat sat on the mat." }
question = "Under a causal mask, the last token sees every token. True or false?"
answer = { kind = "verdict", expected = true }
explain = "True: the causal mask lets token i see the tokens 0 to i, so the last one sees them all."
focus = "causal_card"
'''


@dataclass(frozen=True)
class VerdictSpec(AnswerSpec):
    expected: bool = True
    kind: str = "verdict"


def parse(where: str, raw: dict) -> VerdictSpec:
    unknown_fields(where, raw, "verdict", ("expected",))
    if not isinstance(raw.get("expected"), bool):
        raise AttnvizError(f"{where}: a verdict answer's answer.expected is true or false.")
    return VerdictSpec(expected=raw["expected"])


def right(spec, step) -> Right:
    return Right("true" if spec.expected else "false", "marked in the plan", spec.expected)


def ask(spec, right) -> Ask:
    return Ask("**True or false?**", PICK, ("true", "false"), ("True", "False"))


def is_right(spec, right, value) -> bool:
    return value == right.text


def reveal(spec, right, asked, values) -> Reveal:
    return Reveal(f"**The right answer:** {right.text}.", choice_figure(asked.labels, asked.counts(values),
                                                                        asked.labels[asked.options.index(right.text)],
                                                                        "marked in the plan"), "", "lecture_verdict")


def record_html(spec, right, asked, values) -> str:
    return counts_table(list(asked.labels), asked.counts(values), asked.options.index(right.text), "verdict")


VERDICT = AnswerKind("verdict", "say whether a claim is true", ("expected",), 'answer = { kind = "verdict", '
                     "expected = true }", parse, right, ask, is_right, reveal, record_html)


@pytest.fixture
def verdict():
    register_answer_kind(VERDICT)
    try:
        yield VERDICT
    finally:
        del KINDS[VERDICT.name]


def test_a_kind_is_registered_once(verdict):
    with pytest.raises(ValueError, match="already registered"):
        register_answer_kind(verdict)


def test_a_registered_kind_is_asked_answered_revealed_noted_and_recorded(verdict):
    pages = {path: "" for path in FILES}
    plan = parse_plan(PLAN, pages)
    with pytest.raises(AttnvizError, match=r'Step 1 \("A claim about the causal mask"\): a verdict answer'):
        parse_plan(PLAN.replace("expected = true", 'expected = "yes"'), pages)
    store = lecture_store()
    store.put_plan(PLAN_ID, PLAN.encode())
    code, key = store.create_room(PLAN_ID)
    step = plan.step(1)

    def opened(with_key: bool):
        query = step_query(step, lecture=PLAN_ID, number=1, room=code, key=key if with_key else None,
                           present=with_key)
        return run_app(dict(query), page=FILES[step.page])

    follower = opened(False)
    assert_healthy(follower)
    assert "**True or false?**" in page_text(follower)
    pills = follower.get("button_group")[0]
    pills.set_value("true").run()
    assert "Your answer is in: True." in page_text(follower)
    assert [a.value for a in store.answers(code, 1, key)] == ["true"]

    store.reveal(code, key, 1)
    for projector, at in ((True, opened(True)), (False, opened(False))):
        assert_healthy(at)
        if projector:  # beside the focus figure: the kind's answers as a tally, through the registry alone
            assert class_table(at) == [["option", "students"], ["True ✓ right", "1"], ["False", "0"]]
        else:
            bars = chart_specs(at)["lecture_verdict"]["data"][0]
            assert (bars["x"], bars["y"]) == (["True", "False"], [1, 0])
        assert "**The right answer:** true." in page_text(at) and step.explain in page_text(at)
    notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    assert "**Right answer:** true (marked in the plan)" in page_text(notes)
    record = room_record(code, key)
    assert '<td class="right">True ✓ right answer</td><td>1</td>' in record


def test_no_source_file_outside_the_registry_branches_on_an_answer_kind():
    """What makes a new kind two files: nothing but kinds/ compares a kind's name, or imports a kind's module."""
    names = "|".join(KINDS)  # token, choice, number
    branch = re.compile(rf"""answer\.kind\s*(==|!=|in\b|not in\b)|kind\s*(==|!=)\s*["']({names})["']"""
                        rf"""|in \(["']({names})["']|\bKINDS\[["']""")
    own_module = re.compile(r"lecture\.kinds\.(token|choice|number)\b|kinds import (CHOICE|TOKEN|NUMBER_KIND)")
    registry = ROOT / "attnviz" / "lecture" / "kinds"
    found = []
    for folder in ("attnviz", "ui", "app_pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if registry in path.parents:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if branch.search(line) or own_module.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
