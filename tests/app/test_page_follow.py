"""A class that takes part, in AppTest (each AppTest run is one browser session): /follow opens the room's step as a
follower; the gate hides a follower's figures until the room's Reveal; answers (token, choice, number) are kept one
per session and step, changeable until Reveal, refused after; at Reveal the class's answers are drawn beside the
model's truth; the presenter notes move the room with the key, and without it nothing changes."""

import base64
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
import streamlit.testing.v1.local_script_runner as local
from apptest_helpers import (
    app_menu,
    assert_healthy,
    chart_specs,
    class_column_share,
    class_table,
    drawn_class_rows,
    page_text,
    run_app,
)
from browser_helpers import free_port
from streamlit.proto.Block_pb2 import Block as BlockProto

import attnviz
from attnviz.draw.payload_frames import unwrap
from attnviz.lecture import load_plan, parse_plan, step_query, students_base
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID
from attnviz.server_settings import ServerSettings
from ui.lecture import addresses
from ui.lecture import store as ui_store
from ui.lecture.answers import ANSWER_BOX, MINE_BOX, SESSION
from ui.lecture.room_record import room_record
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store
from ui.shared_view import DRAWN_AS, FLAG

CLASS_STEPS = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
FILES = {path: file for file, path, _ in app_menu()}
PLAN_ID = "utestclass"


@pytest.fixture
def room():
    """The participatory plan in this process's store, and a new room for it -> (plan, code, presenter key)."""
    store = lecture_store()
    store.put_plan(PLAN_ID, CLASS_STEPS.read_bytes())
    code, key = store.create_room(PLAN_ID)
    return load_plan(CLASS_STEPS, {path: "" for path in FILES}), code, key


def open_step(plan, number: int, code: str, key: str | None = None, state: dict | None = None, **more):
    """Step `number`'s page as the projector (with the key) or a follower (without) opens it."""
    step = plan.step(number)
    query = dict(step_query(step, lecture=PLAN_ID, number=number, room=code, key=key, present=key is not None))
    return run_app({**query, **more}, page=FILES[step.page], state=state)


def navigation_to(at) -> str | None:
    """The link a page's script sends this tab to (ui/lecture/follow.navigate), or None."""
    for element in at.get("html"):
        body = element.proto.body
        if "location.assign(new URL(" in body:
            return body.split('new URL("', 1)[1].split('"', 1)[0]
    return None


def test_the_follow_link_opens_the_rooms_step_as_a_follower(room):
    plan, code, key = room
    at = run_app({"room": code.lower()}, page="app_pages/follow.py")
    assert_healthy(at)
    assert f"room {code} · Step 1 of 3: Where does 'ran' look?" in page_text(at)
    link = urlsplit(navigation_to(at))
    assert link.path == "./step_by_step"
    query = dict(parse_qsl(link.query))
    assert query == {"model": "toy", "text": "A dog ran home.", "sbs_head": "1", "lecture": PLAN_ID, "step": "1",
                     "room": code}  # a follower: no key, no presentation mode
    lecture_store().go_to(code, key, 3)
    again = run_app({"room": code}, page="app_pages/follow.py")
    assert "./scaling_lab?" in navigation_to(again)


@pytest.mark.parametrize("query, message", [({"room": "<b>x"}, "is not a room code"),
                                            ({"room": "ZZZZZ"}, "There is no lecture room ZZZZZ")])
def test_a_bad_or_unknown_room_gets_a_message(query, message):
    at = run_app(query, page="app_pages/follow.py")
    assert not at.exception and message in page_text(at), page_text(at)
    assert navigation_to(at) is None


def test_a_follower_answers_a_token_question_and_sees_the_class_beside_the_model_at_reveal(room):
    plan, code, key = room
    store = lecture_store()
    follower = open_step(plan, 1, code)
    assert_healthy(follower)
    assert not chart_specs(follower), "a follower's figures before the room's Reveal"
    text = page_text(follower)
    assert "Which key token does 'ran' weigh most?" in text and "**'ran'** (token 3) look at most, in layer 0, head 1" \
        in text
    assert "Previous" not in text and not follower.button  # a follower cannot move or reveal anything
    pills = follower.get("button_group")[0]
    pills.set_value(2).run()  # 'dog'
    assert store.answer_count(code, 1) == 1 and "Your answer is in: 'dog' (token 2)" in page_text(follower)
    follower.get("button_group")[0].set_value(4).run()  # changed: 'home', still one answer
    assert store.answer_count(code, 1) == 1
    others = [open_step(plan, 1, code) for _ in range(2)]
    others[0].get("button_group")[0].set_value(2).run()
    others[1].get("button_group")[0].set_value(1).run()
    assert store.answer_count(code, 1) == 3
    assert sorted(a.value for a in store.answers(code, 1, key)) == ["1", "2", "4"]

    projector = open_step(plan, 1, code, key)
    assert not chart_specs(projector) and "3** answers so far" in page_text(projector)
    projector.button(key="lecture_reveal").click().run()
    assert_healthy(projector)
    tokens = ["[CLS]", "a", "dog", "ran", "home", ".", "[SEP]"]
    truth = attnviz.load_model("toy").run("A dog ran home.").attentions[0, 1, 3, :].numpy()  # the model's row of 'ran'
    # beside the step's figure on the projector: the right answer first, in words, then a key token a row, the class's
    # count and the model's weight printed, the right one marked by a word ("✓ right"), not by its green alone
    text = page_text(projector)
    assert "**The right answer:** **'a' (token 1), 0.40**, the largest weight of 'ran' (token 3) in the model (layer " \
           "0, head 1); 1 of 3 picked it." in text
    counts = [0, 1, 1, 0, 1, 0, 0]
    assert class_table(projector) == [["key token", "class", "model"]] + [
        [token + (" ✓ right" if i == 1 else ""), str(count), f"{weight:.2f}"]
        for i, (token, count, weight) in enumerate(zip(tokens, counts, truth, strict=True))]
    assert "Top row" not in text and "Bottom row" not in text, "words of rows the projector does not draw"
    assert class_column_share(projector) > 1 / 4, "a quarter of the row wrapped an option over 3 to 5 lines"

    follower.get("button_group")[0].set_value(3).run()  # after Reveal: refused, nothing changed
    assert "Step 1 is already revealed: answers are closed." in page_text(follower)
    assert sorted(a.value for a in store.answers(code, 1)) == ["1", "2", "4"]
    # the phone says what this student answered (its answer box is gone), and whether it was right
    assert ("**Your answer:** 'home' (token 4), ✗ not the right answer. The right answer: 'a' (token 1), weight "
            "0.40.") in page_text(follower)  # the right one beside it: the class's panel is under a tall figure
    reloaded = open_step(plan, 1, code)
    assert chart_specs(reloaded) and "lecture_class_row" in chart_specs(reloaded)  # the gate opened for followers
    assert ("**Your answer:** none (you did not answer this question). The right answer: 'a' (token 1), weight "
            "0.40.") in page_text(reloaded)  # a new browser
    values, rows, cols = drawn_class_rows(reloaded)  # on a phone: the class's row above the model's
    assert cols == tokens and rows == ["class (3)", "model"]
    np.testing.assert_allclose(values[0], [0, 1 / 3, 1 / 3, 0, 1 / 3, 0, 0], atol=1e-3)
    np.testing.assert_allclose(values[1], truth, atol=1e-3)
    assert "The class (3 answers) and the model (layer 0, head 1). class (3): the class's share of answers per key " \
           "token ('a' 1, 'dog' 1, 'home' 1). model: the model's attention weights of 'ran'" in page_text(reloaded)


def blocks_keyed(at, key: str) -> list:
    """The page's containers with this key (a keyed st.container's id ends with -<key>)."""
    found, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        proto = getattr(node, "proto", None)
        if isinstance(proto, BlockProto) and proto.id.endswith(f"-{key}"):
            found.append(node)
        todo.extend(getattr(node, "children", {}).values())
    return found


def test_a_step_drawn_once_for_every_follower_leaves_each_followers_own_parts_out(room):
    """The run that draws a room's step for all its followers (ui/lecture/follower_view.py) draws what they all see
    (the bar, the question, at Reveal the class beside the model) and leaves an empty answer box (at Reveal, an empty
    box for what each one answered) for each follower's page to fill with its own; it follows nothing and sets no
    cookie, and says which step and Reveal it drew."""
    plan, code, key = room
    shared = open_step(plan, 1, code, state={FLAG: True})
    assert_healthy(shared)
    text = page_text(shared)
    assert "Which key token does 'ran' weigh most?" in text
    assert any("<b>Step 1 of 3</b>" in h.proto.body for h in shared.get("html"))  # the follower's bar
    assert not chart_specs(shared), "figures before the room's Reveal"
    [box] = blocks_keyed(shared, ANSWER_BOX)
    assert not box.children and not shared.get("button_group") and "Your answer is in" not in text
    assert SESSION not in shared.session_state and not any("document.cookie" in h.proto.body for h in shared.get("html"))
    assert not list(shared._fragment_storage._fragments), "a drawing for every follower polls the room"
    assert shared.session_state[DRAWN_AS] == (1, False)

    lecture_store().reveal(code, key, 1)
    revealed = open_step(plan, 1, code, state={FLAG: True})
    assert revealed.session_state[DRAWN_AS] == (1, True)
    assert "lecture_class_row" in chart_specs(revealed)  # the class beside the model, for every follower
    [mine] = blocks_keyed(revealed, MINE_BOX)  # what each student answered: its own page fills it
    assert not mine.children and "Your answer" not in page_text(revealed)


def run_poll_only(at, monkeypatch):
    """One run of the page as the follower's 1 s poll makes it: only the poll fragment (st.fragment(run_every=...)),
    with the browser's widget values, so an answer's callback runs at the start of a run that draws nothing else."""
    fragments = list(at._fragment_storage._fragments)  # the page's fragments: the poll alone on a follower's step
    assert len(fragments) == 1, fragments
    plain = local.RerunData
    monkeypatch.setattr(local, "RerunData", lambda **kw: replace(plain(**kw), fragment_id_queue=fragments,
                                                                   is_auto_rerun=True))
    try:
        return at.run()
    finally:
        monkeypatch.setattr(local, "RerunData", plain)


def test_an_answer_sent_during_the_poll_is_confirmed_from_the_store_on_every_run(room, monkeypatch):
    plan, code, key = room
    store = lecture_store()
    follower = open_step(plan, 1, code)
    follower.get("button_group")[0].set_value(2)  # 'dog', sent with the poll's run (the browser's values)
    run_poll_only(follower, monkeypatch)
    assert store.answer_count(code, 1) == 1
    confirmed = [a.value for a in follower.success]
    assert any("Your answer is in: 'dog' (token 2)" in c for c in confirmed), page_text(follower)
    follower.run()  # any later run (a reload of the box) says it again, from the store
    assert any("Your answer is in: 'dog' (token 2)" in a.value for a in follower.success), page_text(follower)


def test_choice_and_number_answers_are_drawn_with_the_right_answer_at_reveal(room):
    plan, code, key = room
    store = lecture_store()
    store.go_to(code, key, 2)
    for choice in ("causal", "causal", "window"):
        student = open_step(plan, 2, code)
        student.get("button_group")[0].set_value(choice).run()
    assert store.answer_count(code, 2) == 3
    store.reveal(code, key, 2)
    at = open_step(plan, 2, code)
    bars = chart_specs(at)["lecture_class_choice"]["data"][0]
    assert bars["x"] == ["A. none", "B. causal", "C. window"]  # lettered as the buttons and the projector letter them
    assert bars["y"] == [0, 2, 1]
    # the right answer is told by a word and a hatch as well as its green: never by colour alone
    title = chart_specs(at)["lecture_class_choice"]["layout"]["title"]["text"]
    assert title == "The class's answers (3)<br>hatched, ✓ right: the right answer"
    assert bars["text"] == ["0", "2 ✓ right", "1"] and bars["marker"]["pattern"]["shape"] == ["", "/", ""]
    assert "**The right answer:** causal (marked in the plan); 2 of 3 answers picked it." in page_text(at)
    assert "**Your answer:** C. window, ✗ not the right answer. The right answer: causal." in page_text(student.run())
    projector = open_step(plan, 2, code, key)  # beside the causal card: each option's words on a row of their own
    assert class_table(projector) == [["option", "students"], ["A. none", "0"], ["B. causal ✓ right", "2"],
                                      ["C. window", "1"]]
    assert class_column_share(projector) > 1 / 4

    store.go_to(code, key, 3)
    boxes = [open_step(plan, 3, code) for _ in range(2)]
    for box, typed in zip(boxes, ("250", "256.0"), strict=True):  # typed, then Enter (or Send): the box's form
        box.text_input(key=f"lecture_answer_{code}_3").set_value(typed)
        box.button(key=f"lecture_answer_{code}_3_send").click().run()
    assert sorted(float(a.value) for a in store.answers(code, 3, key)) == [250.0, 256.0]
    assert chart_specs(boxes[0])  # not predict-first: the page's figures are there while the class answers
    store.reveal(code, key, 3)
    projector = open_step(plan, 3, code, key)  # beside the figure: the histogram with its right line, not words alone
    measured = dot_product_variance_experiment(D_K_GRID).unscaled_variance[D_K_GRID.index(256)]
    beside = chart_specs(projector)["lecture_class_number"]
    assert [line["x0"] for line in beside["layout"]["shapes"]] == [pytest.approx(measured)]
    assert any(f"The class&#x27;s answers (2); dashed line: ✓ right answer, {measured:.4g}" in h.proto.body
               for h in projector.get("html")), "the chart's words above it, where they wrap"
    assert "**The class:** 2 answers, **0** right. Median 253, from 250 to 256." in page_text(projector)
    revealed = open_step(plan, 3, code)
    layout = chart_specs(revealed)["lecture_class_number"]["layout"]
    # the plan names the quantity (Var(q·k) at d_k = 256): the line is the Scaling lab's measured value, not 256
    assert layout["title"]["text"] == f"The class's answers (2)<br>dashed line: ✓ right answer, {measured:.4g}"
    # plotly does not wrap a title: each line fits a phone's chart (a longer one was cut at 390 px)
    assert max(len(line) for line in layout["title"]["text"].split("<br>")) <= 42
    assert [line["x0"] for line in layout["shapes"]] == [pytest.approx(measured)]
    said = page_text(revealed)
    assert (f"The dashed green line marked ✓ right answer, {measured:.4g}, is computed now by attnviz: Var(q·k) at "
            "d_k = 256") in said
    assert [line["line"]["dash"] for line in layout["shapes"]] == ["dash"]
    shown = [m.value for m in revealed.metric if m.label == "Var(q·k)"]  # the page's own figure, beside it
    assert shown == [f"{measured:.2f}"], shown


def test_a_number_answer_without_a_quantity_is_marked_with_the_plans_number(room):
    plan, _, _ = room
    store = lecture_store()
    text = CLASS_STEPS.read_text().replace('answer = { kind = "number", quantity = "dot_variance", d_k = 256 }',
                                           'answer = { kind = "number", expected = 256, tolerance = 10 }')
    assert "quantity" not in text
    store.put_plan(PLAN_ID, text.encode())  # the same plan, its number question with no way to compute it
    code, key = store.create_room(PLAN_ID)
    store.go_to(code, key, 3)
    store.answer(code, 3, "s" * 20, "250")
    store.answer(code, 3, "t" * 20, "200")
    store.reveal(code, key, 3)
    at = open_step(plan, 3, code)
    layout = chart_specs(at)["lecture_class_number"]["layout"]
    assert "dashed line: ✓ right answer, 256 ± 10" in layout["title"]["text"]
    assert not layout.get("annotations"), "no label over the title"
    text = page_text(at)
    assert "The dashed green line marked ✓ right answer is the plan's right answer (256), written by the lecturer, " \
           "not computed" in text
    assert "**The right answer:** 256 ± 10 (marked in the plan); 1 of 2 answers within it." in text


def test_a_weight_quantity_is_the_models_weight_for_the_steps_settings():
    plan = parse_plan(CLASS_STEPS.read_bytes().replace(
        b'answer = { kind = "token", query = "ran", layer = 0, head = 1 }',
        b'answer = { kind = "number", quantity = "weight", query = "ran", key = "dog", layer = 1, head = 0 }'),
        {path: "" for path in FILES})
    right = right_answer(plan.step(1))
    res = attnviz.load_model("toy").run("A dog ran home.")
    ran, dog = res.tokens.index("ran"), res.tokens.index("dog")
    assert right.value == pytest.approx(float(res.attentions[1, 0, ran, dog]), abs=1e-6)
    assert right.source == f"computed by attnviz: the model's weight of 'ran' (token {ran}) on 'dog' (token {dog}), " \
                           "layer 1, head 0"


def test_a_second_tap_on_the_chosen_option_keeps_it_chosen_as_the_answer_counts(room):
    """The browser unpicks an option tapped twice; an answer is never taken back, so the phone shows it picked."""
    plan, code, _ = room
    follower = open_step(plan, 1, code)
    follower.get("button_group")[0].set_value(2).run()
    follower.get("button_group")[0].set_value(None).run()  # the second tap
    assert lecture_store().answer_count(code, 1) == 1
    assert follower.get("button_group")[0].value == 2, "the highlight is on the answer that counts"
    assert "Your answer is in: 'dog' (token 2)" in page_text(follower)


def test_an_empty_or_too_long_number_answer_gets_a_message(room):
    plan, code, key = room
    lecture_store().go_to(code, key, 3)
    box = open_step(plan, 3, code)
    send = f"lecture_answer_{code}_3_send"
    box.button(key=send).click().run()  # Enter (or Send) on the empty box: said, not nothing
    assert "Type a number first, such as 0.25 or 12, then press Enter or Send." in page_text(box)
    box.text_input(key=f"lecture_answer_{code}_3").set_value("9" * 5000)
    box.button(key=send).click().run()
    assert "That number has 5,000 characters" in page_text(box)
    box.text_input(key=f"lecture_answer_{code}_3").set_value("1e400")
    box.button(key=send).click().run()
    assert "Give a number between -1e+09 and 1e+09" in page_text(box)
    assert lecture_store().answer_count(code, 3) == 0


def test_a_follower_goes_where_the_room_goes(room):
    plan, code, key = room
    follower = open_step(plan, 1, code)
    assert navigation_to(follower) is None
    lecture_store().go_to(code, key, 2)  # Next on the notes
    stale = open_step(plan, 1, code)  # a follower's link of the old step, opened now: to the room's step at once
    assert urlsplit(navigation_to(stale)).path == "./masks_lab"


def test_a_wrong_key_changes_nothing(room):
    plan, code, key = room
    store = lecture_store()
    before = store.room(code)
    at = open_step(plan, 2, code, key="x" * 24)  # a crafted projector link
    assert not at.exception
    assert any("presenter key is not room" in e.value for e in at.error)
    assert store.room(code) == before  # not moved, nothing revealed
    assert "lecture_reveal" not in [b.key for b in at.button]
    notes = run_app({"room": code, "key": "y" * 24}, page="app_pages/lecture_notes.py")
    assert any("presenter key is not room" in e.value for e in notes.error)
    assert not notes.button and store.room(code) == before
    bare = run_app({"room": code}, page="app_pages/lecture_notes.py")
    assert not bare.button and "These notes are the lecturer's" in page_text(bare)
    for crafted, said in (("<script>", "is not a room code"), ("ZZZZZ", "there is no room ZZZZZ")):
        at = open_step(plan, 2, crafted, key=key)  # a room code that is not one, or not there
        assert not at.exception and said in page_text(at), page_text(at)
        assert "lecture_reveal" in [b.key for b in at.button]  # the step on its own: its Reveal is this session's
    assert store.room(code) == before


def test_the_notes_drive_the_room_with_the_key(room):
    plan, code, key = room
    store = lecture_store()
    at = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    assert_healthy(at)
    text = page_text(at)
    assert [h.value for h in at.header] == ["Step 1 of 3: Where does 'ran' look?"]
    assert "**Right answer:** 'a' (token 1), weight 0.40 (the model's largest weight in the row of 'ran' (token 3), " \
           "layer 0, head 1)" in text
    assert "not revealed yet" in text and "**0** answers (token)" in text
    assert "of 3 min planned" in text and "of 5 min planned" in text and "Let them tap a token." in text
    open_step(plan, 1, code).get("button_group")[0].set_value(2).run()
    # the step's next move is the red one: Reveal while the class's answers are closed, then Next
    assert (at.button(key="notes_reveal").proto.type, at.button(key="notes_next").proto.type) == ("primary", "secondary")
    at.button(key="notes_reveal").click().run()
    assert store.room(code).revealed == {1} and "**1** answer (token)" in page_text(at)
    assert (at.button(key="notes_reveal").proto.type, at.button(key="notes_next").proto.type) == ("secondary", "primary")
    at.button(key="notes_next").click().run()
    assert store.room(code).step == 2 and [h.value for h in at.header] == ["Step 2 of 3: The causal mask"]
    at.button(key="notes_prev").click().run()
    assert store.room(code).step == 1


def test_the_notes_show_the_lecturer_what_the_class_answered_before_reveal_and_no_one_else(room):
    plan, code, key = room
    store = lecture_store()
    for session, value in (("s" * 20, "2"), ("t" * 20, "2"), ("u" * 20, "4")):  # 'dog', 'dog', 'home'
        store.answer(code, 1, session, value)
    notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    assert_healthy(notes)
    table = next(e.proto.body for e in notes.get("html") if "notes-class" in e.proto.body)
    assert "<th scope='row'>&#x27;dog&#x27; (token 2)</th><td>2</td>" in table
    assert "<th scope='row'>&#x27;home&#x27; (token 4)</th><td>1</td>" in table
    assert "only you see this" in page_text(notes)
    store.answer(code, 1, "v" * 20, "2")  # live: the next look (the notes' one-second fragment) counts it
    notes.run()
    table = next(e.proto.body for e in notes.get("html") if "notes-class" in e.proto.body)
    assert "(token 2)</th><td>3</td>" in table
    projector, follower = open_step(plan, 1, code, key), open_step(plan, 1, code)
    for at in (projector, follower):
        assert not any("notes-class" in e.proto.body for e in at.get("html"))
        assert "dog' 2" not in page_text(at) and "3** answers so far" not in page_text(follower)
    store.go_to(code, key, 2)
    for session, value in (("s" * 20, "causal"), ("t" * 20, "window")):
        store.answer(code, 2, session, value)
    notes.run()
    table = next(e.proto.body for e in notes.get("html") if "notes-class" in e.proto.body)
    assert "<th scope='row'>A. none</th><td>0</td>" in table and "<th scope='row'>B. causal</th><td>1</td>" in table
    store.go_to(code, key, 3)
    for session, value in (("s" * 20, "250"), ("t" * 20, "256"), ("u" * 20, "256")):
        store.answer(code, 3, session, value)
    notes.run()
    assert "Median **256**, from 250 to 256. Most given: 256 (2), 250 (1)." in page_text(notes)


@pytest.fixture
def store_down(monkeypatch):
    """The settings name a Redis where none listens (a real RedisStore, a free loopback port with nothing on it)."""
    settings = ServerSettings(store_backend="redis", store_url=f"redis://:pw@127.0.0.1:{free_port()}/0")
    monkeypatch.setattr(ui_store, "server_settings", lambda: settings)


def test_a_store_out_of_reach_is_said_on_the_lecture_views_and_other_pages_work(store_down):
    follow = run_app({"room": "ABCDE"}, page="app_pages/follow.py")
    notes = run_app({"room": "ABCDE", "key": "k" * 24}, page="app_pages/lecture_notes.py")
    lecture = run_app({}, page="app_pages/lecture.py")
    lecture.button(key="lecture_start").click().run()
    step = run_app({"lecture": "attention", "step": "1", "room": "ABCDE"}, page="app_pages/masks.py")
    for at in (follow, notes, lecture, step):
        assert not at.exception, [e.value for e in at.exception]
        assert any("The lecture's shared store cannot be reached" in e.value for e in at.error), page_text(at)
    assert "lecture_rooms" not in lecture.session_state  # no room was made
    # a follower's step link: the room's Reveal cannot be read, so its figures wait (no early answer), and the page
    # asks the store again on its own
    assert not chart_specs(step) and "Trying again every 2 s" in page_text(step)
    explorer = run_app({"text": "The cat sat."})
    assert_healthy(explorer)
    assert not explorer.error and chart_specs(explorer)


def test_the_rooms_record_is_one_offline_page_with_the_class_beside_the_model(room):
    plan, code, key = room
    store = lecture_store()
    notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    assert [b.proto.label for b in notes.get("download_button")] == ["Export the lecture (one HTML file)"]
    for session, value in (("s" * 20, "2"), ("t" * 20, "2"), ("u" * 20, "4")):
        store.answer(code, 1, session, value)
    store.answer(code, 2, "s" * 20, "causal")
    store.reveal(code, key, 1)
    page = room_record(code, key)
    for text in ("Step 1: Where does &#x27;ran&#x27; look?", "Step 2: The causal mask", "Step 3: A wide head",
                 "<b>The class:</b> 3 answers</p>", "1 answer (the step was not revealed)",
                 "<b>The right answer:</b> <span class=\"right\">causal</span> (marked in the plan)",
                 "computed by attnviz: Var(q·k) at d_k = 256"):
        assert text in page, text

    row = attnviz.load_model("toy").run("A dog ran home.").attentions[0, 1, 3, :]
    assert "<td>dog</td><td>2</td>" in page and f"<td>{row[2]:.2f}</td>" in page  # students beside the model
    fetched = page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # an SVG's namespace is a name, not a request
    assert "http://" not in fetched and "https://" not in fetched  # nothing fetched

    data = base64.b64decode(page.split('id="attnviz-document">', 1)[1].split("<", 1)[0])
    assert data[:4] == b"AVDC"
    head, _ = unwrap(data, lambda h: h["parts"])
    assert [s["name"] for s in head["sets"]] == ["Step 1: Where does 'ran' look?"]  # the steps that run a sentence
    assert 'class="av-svg-heatmap"' in page and "Summary: what we covered" in page  # the figures, printable


def test_the_projectors_view_code_of_a_long_view_is_a_short_link(room):
    plan, code, key = room
    long_text = "A dog ran home and the cat sat on the mat while it rained all day long. " * 2
    lecture_store().reveal(code, key, 1)  # before Reveal the view gets no code (test_the_student_cannot_read...)
    at = open_step(plan, 1, code, key, text=long_text)
    assert_healthy(at)
    links = [c.value for c in at.code if "?v=" in c.value]  # the popover's links are code blocks (a copy button)
    assert len(links) == 1 and links[0].split("?v=")[0].endswith("/step_by_step"), [c.value for c in at.code]
    query = lecture_store().expand(links[0].split("?v=")[1])
    assert ("text", long_text) in parse_qsl(query) and "key=" not in query and "room=" not in query
    assert any(c.value.endswith(f"/follow?room={code}") for c in at.code)  # the follow link: short already
    shown = [*at.caption, *at.code, *at.markdown]
    assert key not in " ".join(c.value for c in shown if "lecture_notes" not in c.value)  # only the notes' link


def test_a_class_servers_processes_give_the_balancers_address(monkeypatch):
    """deploy/class_server.py gives its processes its balancer's address (ATTNVIZ_CLASS_URL): the QR codes use it
    when the lecturer's browser shows a loopback one; a loopback class address is no network address."""
    monkeypatch.setenv(addresses.CLASS_URL_VARIABLE, "http://lecture-hall.test:8501/")
    assert addresses.network_url() == "http://lecture-hall.test:8501"

    assert students_base("", "http://127.0.0.1:8501/lecture", addresses.network_url(), "lecture") \
        == "http://lecture-hall.test:8501"
    monkeypatch.setenv(addresses.CLASS_URL_VARIABLE, "http://127.0.0.1:8501")
    assert addresses.network_url() == ""
