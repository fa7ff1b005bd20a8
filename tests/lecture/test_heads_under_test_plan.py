"""The shipped plan "Heads under test" loads against the app's menu, and its figures are the API's."""


from apptest_helpers import app_menu

from attnviz.lecture import load_plan
from attnviz.paths import LECTURES

PLAN = LECTURES / "heads_under_test.toml"
PAGES = {path: title for _, path, title in app_menu()}


def test_the_plan_loads_with_a_predict_first_choice_on_the_knock_out():
    plan = load_plan(PLAN, PAGES)
    assert [s.page for s in plan.steps] == ["find_head", "head_claims", "head_claims", "head_claims"]
    knock_out = plan.steps[2]
    assert knock_out.predict_first and knock_out.answer.kind == "choice" and knock_out.focus == "knockout"
    assert knock_out.answer.expected in knock_out.answer.options
    assert dict(knock_out.state)["model"] == "tiny-llama"
    assert plan.steps[1].answer.expected == "about a third" and "37%" in plan.steps[1].explain
    assert sum(s.minutes for s in plan.steps) == 15
