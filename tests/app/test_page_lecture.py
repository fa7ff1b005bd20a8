"""Lecture mode in AppTest: the lecture page steps through a plan and starts a room; a step's link opens its page with
the step's settings in the widgets and the lecture bar, and with the presenter key moves the room; a predict-first
step hides the figures until Reveal; every step of the default plan opens its page with its settings applied.
(Following, answers, the notes and wrong keys: test_page_follow.py.)"""

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, page_text, readable_strings, run_app

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
    assert "key" not in at.query_params and key not in bar  # the key left the address and the projector's links...
    cookie = f"attnviz_key_{code}={key}; path=/; SameSite=Strict"
    assert any(cookie in e.proto.body for e in at.get("html"))  # ...for this browser's cookie, which the next reads
    shown = [page_text(at), *(str(e.value) for e in at.code),
             *(e.proto.body for e in at.get("html") if cookie not in e.proto.body)]
    assert not [text for text in shown if key in text]  # nor on the projector's screen (the Students popover)
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
    return {n.proto.id.rsplit("-figure_", 1)[1] for n in blocks(at._tree)
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
    asks = step.predict_first or step.answer is not None
    if asks:  # the explanation says the answer: not before Reveal
        assert not step.explain or step.explain not in page_text(at)
    if step.predict_first:
        assert step.question in page_text(at)
        at.button(key="lecture_reveal").click().run()
        assert_healthy(at)
    if step.explain and (step.predict_first or not asks):  # what the step shows, or why (a link without a room)
        explained = keyed(at, "lecture_explain")
        assert explained is not None and step.explain in "\n".join(readable_strings(explained)), "the step's explain is not shown"
        if step.focus:  # where the projector's first screen is: at the top of the focus figure
            assert keyed(keyed(at, f"figure_{step.focus}"), "lecture_explain") is not None
    assert not at.error, [e.value for e in at.error]
    for key, _ in step.state:
        if step.page == "" and key in SELECTION_KEYS:
            continue  # checked below, as the selected cell
        wanted = [v for k, v in step.state if k == key]
        assert key in at.session_state, f"{key}: no widget of /{step.page} reads it"
        assert url_spelling(at.session_state[key]) == wanted, key
    assert not at.toast, [t.value for t in at.toast]  # no value of the step's link refused
    if step.page == "" and "sbs_head" in dict(step.state):
        assert at.session_state[SELECTION] == selection_from_params(dict(step.state))
    if step.focus:
        assert step.focus in figure_ids(at), f"fig={step.focus}: /{step.page} drew the figures {figure_ids(at)}"


def blocks(node):
    """Every node under `node` (AppTest's element tree)."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from blocks(child)


def keyed(node, key: str):
    """The block drawn with this key (st.container(key=...)) under node (an AppTest or a block), or None."""
    return next((n for n in blocks(getattr(node, "_tree", node)) if type(getattr(n, "proto", None)).__name__ == "Block"
                 and n.proto.id.endswith(f"-{key}")), None)


def test_the_question_shows_what_it_refers_to_and_at_reveal_the_class_sits_in_the_focus_figure():
    """Before Reveal the question says what it is about (the number in words, the sentence with its query in bold)
    and a choice's options lettered A, B, C…, on the projector and on a phone (whose answer box carries the same
    letters); after Reveal the class's answers are drawn inside the step's focus figure, the screen the focus brings
    up, on the projector beside the figure, and a follower's phone is brought to that figure."""
    plan = SHIPPED["attention"]
    store = lecture_store()
    code, key = store.create_room("attention")
    number = next(k for k, s in enumerate(plan.steps, 1) if s.page == "why_attention" and s.answer)
    store.go_to(code, key, number)
    projector = run_app(dict(step_query(plan.step(number), lecture="attention", number=number, room=code, key=key)),
                        page=FILES["why_attention"])
    text = page_text(projector)
    assert "The number, in words: «six hundred four million" in text
    options = plan.step(number).answer.options
    assert all(f"<b>{'ABCD'[i]}.</b> {o}" in text for i, o in enumerate(options))
    follower = run_app(dict(step_query(plan.step(number), lecture="attention", number=number, room=code,
                                       present=False)), page=FILES["why_attention"])
    pills = follower.get("button_group")[0]
    assert [pills.format_func(o) for o in options] == [f"{'ABCD'[i]}. {o}" for i, o in enumerate(options)]
    assert "<b>A.</b>" not in page_text(follower)  # the answer box under the question holds the lettered options

    # a question about a page's setting says what is measured at it, not the shared sentence the page also reads
    # (step 9 showed «The animal didn't cross the street…» under "the variance of q · k at d_k = 512")
    scaling = next(k for k, s in enumerate(plan.steps, 1) if s.page == "scaling_lab" and s.question)
    at = run_app(dict(step_query(plan.step(scaling), lecture="attention", number=scaling)), page=FILES["scaling_lab"])
    text = page_text(at)
    assert (f"What is measured: q · k, the unscaled dot product, over 4,000 random pairs q, k of d_k = "
            f"{dict(plan.step(scaling).state)['scale_dk']} entries, each entry drawn from N(0, 1)") in text
    assert "The sentence:" not in text and "The animal" not in text

    token = next(k for k, s in enumerate(plan.steps, 1) if s.answer and s.answer.kind == "token")
    step = plan.step(token)
    store.go_to(code, key, token)
    before = run_app(dict(step_query(step, lecture="attention", number=token, room=code, key=key)), page=FILES[""])
    assert "<b>it</b>" in page_text(before)  # the query, in its sentence
    store.reveal(code, key, token)
    for present in (True, False):
        at = run_app(dict(step_query(step, lecture="attention", number=token, room=code, key=key if present else None,
                                     present=present)), page=FILES[""])
        assert_healthy(at)
        figure = keyed(at, f"figure_{step.focus}")
        assert figure is not None and any(n.proto.id.endswith("-lecture_class") for n in blocks(figure)
                                          if type(getattr(n, "proto", None)).__name__ == "Block")
        scrolls = any(f'const id = "{step.focus}"' in e.proto.body for e in at.get("html"))
        assert scrolls  # the projector's focus (fig= in its link), the phone's at Reveal


def test_a_transformer_map_block_opened_in_a_lecture_stays_in_the_lecture():
    """The map as step 1 on the projector: each block's link carries present=1 and the lecture's keys (never the
    presenter key); the block's page keeps the lecture bar with the way back to the map and Next to step 2, honours its
    fig=, asks nothing, and leaves the room at step 1."""
    plan = SHIPPED["attention"]
    assert plan.step(1).page == "transformer_map"
    store = lecture_store()
    code, key = store.create_room("attention")
    at = run_app(dict(step_query(plan.step(1), lecture="attention", number=1, room=code, key=key)),
                 page=FILES["transformer_map"])
    assert_healthy(at)
    drawn = " ".join(m.value for m in at.markdown)
    masked = next(h for h in re.findall(r'href="([^"]+)"', drawn.replace("&amp;", "&")) if "masks_lab" in h)
    link = urlsplit(masked)
    query = parse_qsl(link.query)
    assert query == [("fig", "causal_card"), ("present", "1"), ("lecture", "attention"), ("step", "1"),
                     ("room", code)]
    # the click, in the projector's browser: a page load that finds the room's presenter key in the browser's
    # cookie (AppTest has no cookies: the link carries it here, as the lecturer's own link does)
    block = run_app(dict([*query, ("key", key)]), page=FILES["masks_lab"])
    assert_healthy(block)
    bar = next(e.proto.body for e in block.get("html") if "attnviz-lecture-bar" in e.proto.body)
    back = bar.split('class="attnviz-lecture-prev" href="')[1].split('"')[0].replace("&amp;", "&")
    assert back.startswith("./transformer_map?") and ("step", "1") in parse_qsl(urlsplit(back).query)
    assert "← Back to The Transformer map" in bar and "Step 1 of 15" in bar
    after = bar.split('class="attnviz-lecture-next" href="')[1].split('"')[0].replace("&amp;", "&")
    assert after.startswith(f"./{plan.step(2).page}?") and ("step", "2") in parse_qsl(urlsplit(after).query)
    assert any('const id = "causal_card"' in e.proto.body for e in block.get("html"))  # fig= honoured
    assert "lecture_reveal" not in [b.key for b in block.button] and key not in bar
    assert store.room(code).step == 1
