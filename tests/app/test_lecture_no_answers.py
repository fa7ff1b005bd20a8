"""A question revealed with no answers from the class, for each kind (token, choice, number): the projector, a
follower's phone, the presenter notes and the handout show the right answer and say plainly that the class gave no
answers, with nothing untrue (a number's empty chart had a students' axis up to 4, "The class's answers (0)", and,
with a tolerance, its green band across the whole plot; a token's class row was 0.00 under every token) and no
traceback."""

import re
from pathlib import Path

import pytest
from apptest_helpers import (
    app_menu,
    assert_healthy,
    chart_specs,
    class_table,
    drawn_class_rows,
    page_text,
    run_app,
)

from attnviz.draw.class_answers import number_figure
from attnviz.lecture import load_plan, step_query
from ui.lecture.room_record import room_record
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store

CLASS_STEPS = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"  # token, choice, number
FILES = {path: file for file, path, _ in app_menu()}
PLAN_ID = "utestnone"
NO_ANSWERS = "No answers from the class"  # written in the chart, where its bars would be


@pytest.fixture(scope="module")
def revealed():
    """A room of the three-question plan, each step revealed with no answers -> (plan, code, key)."""
    store = lecture_store()
    store.put_plan(PLAN_ID, CLASS_STEPS.read_bytes())
    code, key = store.create_room(PLAN_ID)
    plan = load_plan(CLASS_STEPS, {path: "" for path in FILES})
    for number in range(1, len(plan.steps) + 1):
        store.go_to(code, key, number)
        store.reveal(code, key, number)
    return plan, code, key


def opened(plan, number: int, code: str, key: str | None):
    """Step `number` as the projector (with the key) or a follower's phone (without) opens it."""
    step = plan.step(number)
    query = dict(step_query(step, lecture=PLAN_ID, number=number, room=code, key=key, present=key is not None))
    at = run_app(query, page=FILES[step.page])
    assert_healthy(at)
    return at


def said_wrongly(text: str) -> list[str]:
    """What a view of no answers must not say (a count of 0 where it should say none; "yet" once answers closed)."""
    return [w for w in (r"answers \(0\)", r"\b0 answers", r"\*\*0\*\* right", "No answers yet") if re.search(w, text)]


@pytest.mark.parametrize("who", ["projector", "follower"])
def test_a_token_question_draws_the_models_row_alone(revealed, who):
    plan, code, key = revealed
    at = opened(plan, 1, code, key if who == "projector" else None)
    tokens = ["[CLS]", "a", "dog", "ran", "home", ".", "[SEP]"]
    text = page_text(at)
    if who == "projector":  # beside its figure, a table: a key token a row, the model's weight, no column of 0s
        table = class_table(at)
        assert table[0] == ["key token", "model"] and [r[0].removesuffix(" ✓ right") for r in table[1:]] == tokens
        assert "; the class gave no answers." in text
    else:
        values, rows, columns = drawn_class_rows(at)
        assert rows == ["model"], rows  # no row of shares of nobody's answers
        assert columns == tokens
        assert "The class (no answers) and the model (layer 0, head 1)" in text
        assert "The class gave no answers, so only the model's row is drawn." in text
    assert right_answer(plan.step(1)).text.split(",")[0] in text and not said_wrongly(text), said_wrongly(text)


def test_a_choice_question_marks_its_right_option_and_says_nobody_answered(revealed):
    plan, code, key = revealed
    phone = opened(plan, 2, code, None)
    chart = chart_specs(phone)["lecture_class_choice"]
    assert chart["layout"]["title"]["text"] == "The class gave no answers<br>hatched, ✓ right: the right answer"
    assert chart["data"][0]["text"] == ["0", "0 ✓ right", "0"]
    assert [a["text"] for a in chart["layout"]["annotations"]] == [NO_ANSWERS]
    assert chart["layout"]["yaxis"]["range"] == [0, 1] and chart["layout"]["yaxis"]["tickvals"] == [0]
    projector = opened(plan, 2, code, key)
    for at in (phone, projector):
        text = page_text(at)
        assert "**The right answer:** causal (marked in the plan); the class gave no answers." in text
        assert not said_wrongly(text), said_wrongly(text)


def test_a_number_question_draws_its_right_line_on_an_axis_of_no_answers(revealed):
    plan, code, key = revealed
    right = right_answer(plan.step(3)).value
    phone = opened(plan, 3, code, None)
    layout = chart_specs(phone)["lecture_class_number"]["layout"]
    assert layout["title"]["text"] == f"The class gave no answers<br>dashed line: ✓ right answer, {right:.4g}"
    assert [(s["x0"], s["line"]["dash"]) for s in layout["shapes"]] == [(pytest.approx(right), "dash")]
    low, high = layout["xaxis"]["range"]
    assert low < right < high and high - right == pytest.approx(right - low)  # the line in the middle of its axis
    assert layout["yaxis"]["range"] == [0, 1] and layout["yaxis"]["tickvals"] == [0]  # no scale of absent answers
    assert [a["text"] for a in layout["annotations"]] == [NO_ANSWERS]
    projector = opened(plan, 3, code, key)
    for at in (phone, projector):
        text = page_text(at)
        assert f"**The right answer:** {right:.4g} (computed by attnviz: Var(q·k) at d_k = 256" in text
        assert "(theory: d_k)); the class gave no answers." in text
        assert not said_wrongly(text), said_wrongly(text)


def test_a_number_questions_band_is_not_the_whole_axis_with_no_answers():
    layout = number_figure([], 256.0, "marked in the plan", 10).to_plotly_json()["layout"]
    low, high = layout["xaxis"]["range"]
    band = next(s for s in layout["shapes"] if s["type"] == "rect")
    assert low < band["x0"] < 256 < band["x1"] < high  # plotly's own range had been the band's ends


def test_the_notes_and_the_handout_say_the_class_gave_no_answers(revealed):
    plan, code, key = revealed
    store = lecture_store()
    for number in (1, 2, 3):
        store.go_to(code, key, number)
        notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
        assert_healthy(notes)
        text = page_text(notes)
        assert "The class gave no answers: answers are closed." in text and "No answers yet" not in text
    record = room_record(code, key)
    assert record.count("<b>The class:</b> no answers</p>") == 3
    assert "(the step was not revealed)" not in record
    for number in (1, 2, 3):
        assert right_answer(plan.step(number)).text.split(",")[0].replace("'", "&#x27;") in record
