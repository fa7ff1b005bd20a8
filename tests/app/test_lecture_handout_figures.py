"""The handout gives every step of every shipped plan its page's own figure, for the step's own state: each step's
section holds a figure (an SVG or a table), never "could not be made" in its place; a question's focus figure (the
page's figure that answers it) is among them; and two steps of one page in different states get different figures.
(Head claims, Induction heads, Efficient attention and Additive had none; Positions, Find the head, Query–key space and
the multi-head step had the shared model's layer 0 head 0 in place of their page's figure; the Attention-as-a-layer
steps b, c and d one and the same; the Scaling lab's chart failed.)"""

import html
import re
from collections import defaultdict

import pytest
from apptest_helpers import app_menu, run_app

from attnviz.lecture import load_plan
from attnviz.paths import LECTURES
from ui.lecture.room_record import room_record
from ui.lecture.step_state import StepRun
from ui.lecture.store import lecture_store

PAGES = {path: title for _, path, title in app_menu()}
PLANS = {path.stem: load_plan(path, PAGES) for path in sorted(LECTURES.glob("*.toml"))}
VIEWED = {"text", "model", "mask", "scaled", "layer", "heads"}  # read into the step's view (StepRun.view)


@pytest.fixture(scope="module")
def sections() -> dict[tuple[str, int], str]:
    """(plan, step number) -> the step's section of its plan's handout."""
    run_app({}, page="app_pages/lecture.py")  # the app's menu, which a plan's pages are checked against
    found = {}
    for plan_id, plan in PLANS.items():
        code, key = lecture_store().create_room(plan_id)
        page = room_record(code, key)
        for number in range(1, len(plan.steps) + 1):
            start = page.index(f'<section class="step" id="step-{number}">')
            found[plan_id, number] = page[start:page.index("</section>", start)]
    return found


def figures_of(section: str) -> list[tuple[str, str]]:
    """(the figure id it says it draws, its drawing) of each figure in a step's section."""
    return re.findall(r'<figure(?: data-figure="([^"]*)")?>(.*?)(?:<figcaption>.*?</figcaption>)?</figure>', section,
                      flags=re.DOTALL)


def state_of(step) -> tuple:
    """What decides a step's figures: its view (the defaults filled in), its page's own settings, and its focus."""
    view = StepRun(step).view
    own = tuple(sorted((k, v) for k, v in step.state if k not in VIEWED))
    return view.model_spec, view.text, view.mask_spec, view.scale, view.layer, tuple(view.heads), own, step.focus


def test_every_step_of_every_shipped_plan_has_its_pages_figure(sections):
    missing = []
    for (plan_id, number), section in sections.items():
        step = PLANS[plan_id].step(number)
        drawn = figures_of(section)
        where = f"{plan_id} step {number} (/{step.page}, {step.title})"
        if not drawn or not all(re.search(r"<svg|<table", body) for _, body in drawn):
            missing.append(f"{where}: no figure")
        if "could not be made" in section or "makes no printed figure" in section:
            missing.append(f"{where}: {html.unescape(re.sub('<[^>]+>', ' ', section))[-160:]}")
        if step.focus and step.focus not in {shows for shows, _ in drawn}:
            missing.append(f"{where}: not its focus figure {step.focus!r} (has {[s for s, _ in drawn]})")
    assert not missing, "\n".join(missing)


def test_steps_of_one_page_in_different_states_get_different_figures(sections):
    by_page = defaultdict(list)
    for (plan_id, number), section in sections.items():
        step = PLANS[plan_id].step(number)
        by_page[step.page].append((f"{plan_id} step {number}", state_of(step), [b for _, b in figures_of(section)]))
    same = [f"{a} and {b} (/{page})" for page, steps in by_page.items()
            for i, (a, state_a, drawn_a) in enumerate(steps) for b, state_b, drawn_b in steps[i + 1:]
            if state_a != state_b and drawn_a == drawn_b]
    assert not same, "the same figures for different states: " + "; ".join(same)
