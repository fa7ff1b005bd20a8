"""Lecture mode in AppTest: the lecture page steps through a plan and starts a room; a step's link opens its page with
the step's settings in the widgets and the lecture bar, and with the presenter key moves the room; a predict-first
step hides the figures until Reveal; every step of the default plan opens its page with its settings applied.
(Following, answers, the notes and wrong keys: test_page_follow.py.)"""

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, page_text, run_app

from attnviz.lecture import load_plan, step_query
from attnviz.lessons.explorer.selection import selection_from_params
from attnviz.paths import LECTURES
from ui.lecture.store import lecture_store
from ui.state import SELECTION

THREE_STEPS = Path(__file__).resolve().parents[1] / "lecture" / "three_steps.toml"
DEFAULT_PLAN = LECTURES / "attention.toml"
FILES = {path: file for file, path, _ in app_menu()}
PENDING = {"why_attention": "", "attention_layer": "", "find_head": "", "qk_space": ""}  # pages from other branches
PLAN_ID = "utest3steps"


@pytest.fixture
def three_steps():
    """The small plan, as if uploaded to this process's store (AppTest runs the app in the test's process)."""
    lecture_store().put_plan(PLAN_ID, THREE_STEPS.read_bytes())
    return load_plan(THREE_STEPS, {path: "" for path in FILES})


def url_spelling(value) -> list[str]:
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in url_spelling(item)]
    return [str(value)]


def test_the_lecture_page_steps_through_a_plan(three_steps):
    at = run_app({"lecture": PLAN_ID}, page="app_pages/lecture.py")
    assert_healthy(at)
    assert not at.error, [e.value for e in at.error]
    assert [h.value for h in at.header] == ["Three steps"]
    assert "Step 1 of 3: Masks: the causal pattern" in page_text(at)
    assert not at.get("link_button")  # no room yet: nothing to open
    at.button(key="lecture_start").click().run()
    code, key = at.session_state["lecture_rooms"][PLAN_ID]
    assert lecture_store().room(code).plan_id == PLAN_ID and lecture_store().is_presenter(code, key)
    at.button(key="lecture_next").click().run()
    text = page_text(at)
    assert "Step 2 of 3: Scaling: a wide head" in text
    assert "Predict first" in text and "How spread out are the dot products at d_k = 256?" in text
    link = next(b for b in at.get("link_button") if "projector" in b.proto.label).proto.url
    assert link == f"./scaling_lab?scale_dk=256&present=1&fig=dot_products&lecture={PLAN_ID}&step=2&room={code}&key={key}"
    notes = next(b for b in at.get("link_button") if "notes" in b.proto.label).proto.url
    assert notes == f"./lecture_notes?room={code}&key={key}"
    assert f"/follow?room={code}" in page_text(at) and key not in page_text(at)  # the class's link: no key
    at.button(key="lecture_next").click().run()
    assert "Step 3 of 3: One head, from input to output" in page_text(at)
    assert at.button(key="lecture_next").disabled
    at.button(key="lecture_prev").click().run()
    assert "Step 2 of 3" in page_text(at)


def test_an_unknown_plan_in_the_link_gets_a_message(three_steps):
    at = run_app({"lecture": "nosuchplan"}, page="app_pages/lecture.py")
    assert not at.exception
    assert any('no lecture plan "nosuchplan"' in e.value for e in at.error), [e.value for e in at.error]


def open_step(plan, number: int, room: str | None = None, key: str | None = None):
    step = plan.step(number)
    return run_app(dict(step_query(step, lecture=PLAN_ID, number=number, room=room, key=key)), page=FILES[step.page])


def test_a_step_opens_its_page_in_its_state_with_the_lecture_bar(three_steps):
    code, key = lecture_store().create_room(PLAN_ID)
    at = open_step(three_steps, 3, code, key)
    assert_healthy(at)
    assert at.text_area(key="text").value == "A dog ran home."
    assert at.session_state["model"] == "toy" and at.session_state["sbs_head"] == 1
    bar = next(e.proto.body for e in at.get("html") if "attnviz-lecture-bar" in e.proto.body)
    assert "Step 3 of 3" in bar and "One head, from input to output" in bar
    prev = urlsplit(bar.split('class="attnviz-lecture-prev" href="')[1].split('"')[0].replace("&amp;", "&"))
    assert prev.path == "./scaling_lab" and ("step", "2") in parse_qsl(prev.query)
    assert 'class="attnviz-lecture-next"' not in bar  # the last step: no Next link
    assert f"key={key}" in prev.query  # the projector's links keep its key
    assert lecture_store().room(code).step == 3  # the projector's link moved the room: followers and notes follow


def test_a_predict_first_step_hides_the_figures_until_revealed(three_steps):
    code, key = lecture_store().create_room(PLAN_ID)
    at = open_step(three_steps, 2, code, key)
    assert_healthy(at)
    assert not chart_specs(at), "figures drawn before the reveal"
    assert "How spread out are the dot products at d_k = 256?" in page_text(at)
    at.button(key="lecture_reveal").click().run()
    assert_healthy(at)
    assert chart_specs(at) and at.session_state["scale_dk"] == 256
    assert lecture_store().room(code).revealed == {2}
    again = open_step(three_steps, 2, code, key)  # back to this step later (a new page load): still revealed
    assert chart_specs(again)
    alone = open_step(three_steps, 2)  # a lecture link without a room: its own Reveal, in this session
    assert not chart_specs(alone)
    alone.button(key="lecture_reveal").click().run()
    assert chart_specs(alone)


def test_a_bad_lecture_link_on_a_page_gets_a_message_and_the_page_draws(three_steps):
    at = run_app({"lecture": PLAN_ID, "step": "99"}, page="app_pages/masks.py")
    assert not at.exception
    assert any("no step \"99\"" in w.value for w in at.warning)
    at = run_app({"lecture": "gone"}, page="app_pages/masks.py")
    assert not at.exception and any("no lecture plan" in w.value for w in at.warning)
    assert chart_specs(at)


SHIPPED = {path.stem: load_plan(path, {**{p: "" for p in FILES}, **PENDING})
           for path in sorted(DEFAULT_PLAN.parent.glob("*.toml"))}
SHIPPED_STEPS = [(plan_id, number, step) for plan_id, plan in SHIPPED.items()
                 for number, step in enumerate(plan.steps, start=1)]
SELECTION_KEYS = ("sbs_head", "sbs_query", "sbs_key")  # the explorer's selected cell, read into one Selection


def figure_ids(at) -> set[str]:
    """The ids of the figures (ui.figure containers) the page drew: their blocks' ids end in -figure_<id>."""
    def nodes(node):
        yield node
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                yield from nodes(child)

    return {n.proto.id.rsplit("-figure_", 1)[1] for n in nodes(at._tree)
            if type(getattr(n, "proto", None)).__name__ == "Block" and "-figure_" in n.proto.id}


def test_the_default_plan_fits_50_minutes_in_15_steps():
    plan = SHIPPED["attention"]
    assert len(plan.steps) <= 15 and sum(s.minutes for s in plan.steps) <= 50


@pytest.mark.parametrize("plan_id, number, step", SHIPPED_STEPS,
                         ids=[f"{p}-{n}-{s.page or 'explorer'}" for p, n, s in SHIPPED_STEPS])
def test_each_step_of_each_shipped_plan_opens_its_page_with_its_settings_and_its_focus(plan_id, number, step):
    """The step as the projector opens it (present=1, the lecture's keys, fig=<focus>), revealed where it asks first:
    the page draws without an error, each state key is read by its page (its widget holds the step's value), and the
    focus figure is drawn."""
    assert step.page in FILES, f"/{step.page} is not a page of this app (yet)"
    query: dict[str, list[str]] = {}
    for key, value in step_query(step, lecture=plan_id, number=number):  # a repeated key (a list) kept whole
        query.setdefault(key, []).append(value)
    at = run_app({k: v[0] if len(v) == 1 else v for k, v in query.items()}, page=FILES[step.page])
    assert_healthy(at)
    if step.predict_first:
        assert step.question in page_text(at)
        at.button(key="lecture_reveal").click().run()
        assert_healthy(at)
    assert not at.error, [e.value for e in at.error]
    for key, _ in step.state:
        if step.page == "" and key in SELECTION_KEYS:
            continue  # checked below, as the selected cell
        wanted = [v for k, v in step.state if k == key]
        assert key in at.session_state, f"{key}: no widget of /{step.page} reads it"
        assert url_spelling(at.session_state[key]) == wanted, key
    if step.page == "" and "sbs_head" in dict(step.state):
        assert at.session_state[SELECTION] == selection_from_params(dict(step.state))
    if step.focus:
        assert step.focus in figure_ids(at), f"fig={step.focus}: /{step.page} drew the figures {figure_ids(at)}"
