"""The class against the model, true: each shipped token question's right answer, computed here with the engine
alone for the step's own state (the model, text, mask and scale its plan names; the layer, heads and query its
answer names), is the row and the numbers that every view shows after Reveal: the projector, a follower's phone,
the presenter notes, and the record. (The default plan's step 5 showed layer 0's mean of heads on the projector and
the phones, and a third row in the record: the row was read from the page's pickers before they were drawn.)"""

import html
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import app_menu, assert_healthy, class_table, drawn_class_rows, page_text, run_app
from lecture_truth import engine_row

from attnviz.lecture import load_plan, step_query
from attnviz.paths import LECTURES
from ui.lecture.room_record import room_record
from ui.lecture.store import lecture_store

FILES = {path: file for file, path, _ in app_menu()}
PAGES = {path: title for _, path, title in app_menu()}
TOKEN_STEPS = [(path.stem, number, step) for path in sorted(LECTURES.glob("*.toml"))
               for number, step in enumerate(load_plan(path, PAGES).steps, start=1)
               if step.answer is not None and step.answer.kind == "token"]


def test_the_default_plan_asks_a_token_question():
    assert [(plan, n) for plan, n, _ in TOKEN_STEPS] == [("attention", 5)]


@pytest.mark.parametrize("plan_id, number, step", TOKEN_STEPS, ids=[f"{p}-{n}" for p, n, _ in TOKEN_STEPS])
def test_every_view_shows_the_engines_row_for_the_steps_state(plan_id, number, step):
    tokens, query, row = engine_row(step)
    best = int(np.argmax(row))
    said = f"'{tokens[best]}' (token {best})"
    what = f"layer {step.answer.layer}, head {step.answer.heads[0]}" if len(step.answer.heads) == 1 else \
        f"layer {step.answer.layer}, the mean of heads"
    store = lecture_store()
    code, key = store.create_room(plan_id)
    store.go_to(code, key, number)
    for session, value in (("s" * 20, str(best)), ("t" * 20, "0")):
        store.answer(code, number, session, value)
    store.reveal(code, key, number)

    def opened(with_key: bool):
        query_pairs = step_query(step, lecture=plan_id, number=number, room=code, key=key if with_key else None,
                                 present=with_key)
        return run_app(dict(query_pairs), page=FILES[step.page])

    for who, at in (("projector", opened(True)), ("follower", opened(False))):
        assert_healthy(at)
        text = page_text(at)
        assert f"the model ({what}" in text and f"{said}, {row[best]:.2f}" in text, (who, text)
        if who == "projector":  # beside the focus figure: a key token a row, the model's weight printed
            table = class_table(at)
            assert [r[0].removesuffix(" ✓ right") for r in table[1:]] == tokens
            assert [r[2] for r in table[1:]] == [f"{w:.2f}" for w in row]  # the model's row: the engine's
            assert table[1 + best][0].endswith("✓ right") and "1 of 2 picked it" in text
            continue
        values, rows, columns = drawn_class_rows(at)
        assert columns == tokens, who
        np.testing.assert_allclose(values[1], row, atol=1e-3, err_msg=who)  # the model's row: the engine's
        assert "The class (2 answers)" in text, who

    notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    assert f"**Right answer:** {said}, weight {row[best]:.2f} (the model's largest weight in the row of " \
           f"'{tokens[query]}' (token {query}), {what}" in page_text(notes)

    record = html.unescape(room_record(code, key))
    assert f'<span class="right">{said}, weight {row[best]:.2f}</span>' in record
    for i, (token, weight) in enumerate(zip(tokens, row, strict=True)):
        mark = ' class="right"' if i == best else ""
        assert f"<td{mark}>{token}" in record and f"<td>{weight:.2f}</td>" in record
