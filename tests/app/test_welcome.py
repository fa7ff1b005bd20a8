"""The home page's welcome (ui/parts/welcome.py): one line on what attnviz is and three ways in, for a newcomer; left
out on a projector and in a lecture. What it says is true: the lecture link opens the Lecture page on the default plan
with the steps it counts, the notebook's code runs, and the example notebook it names shows what it says it shows."""

import json
import os
import tomllib
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import app_menu, assert_healthy, page_text, run_app

import attnviz
from attnviz.lecture import load_plan
from attnviz.notebook.widget import AttentionWidget
from attnviz.paths import LECTURES
from ui.lecture.plans import DEFAULT
from ui.parts import welcome

ROOT = Path(__file__).resolve().parents[2]
TOY = {"model": "toy", "text": "the cat sat"}



def default_plan():
    """The plan the welcome's lecture link opens, read as the app reads it."""
    return load_plan(LECTURES / f"{DEFAULT}.toml", {path: title for _, path, title in app_menu()})

def welcome_links(at) -> list:
    return [link for link in at.get("page_link") if link.proto.page == "lecture"]  # its URL path


def test_a_newcomer_reads_what_attnviz_is_and_three_ways_in():
    at = run_app(TOY)
    assert_healthy(at)
    text = page_text(at)
    assert welcome.WHAT in text and "**Explore a sentence** in the sidebar" in text
    [teach] = welcome_links(at)
    steps = len(default_plan().steps)
    assert teach.proto.query_string == f"lecture={DEFAULT}" and f"the default plan, {steps} steps" in teach.proto.label
    assert welcome.NOTEBOOK in [c.value for c in at.code]  # in the notebook's popover
    # the controls the first way in names are the sidebar's
    assert {at.text_area(key="text").label, at.selectbox(key="model").label} == {"Text", "Model"}


@pytest.mark.parametrize("query", [{"present": "1"}, {"lecture": DEFAULT, "step": "5"}, {"room": "ABC123"}],
                         ids=["projector", "lecture step", "exploring away from a room"])
def test_no_welcome_on_a_projector_or_in_a_lecture(query):
    at = run_app({**TOY, **query})
    assert_healthy(at)
    assert welcome.WHAT not in page_text(at) and not welcome_links(at) and welcome.NOTEBOOK not in at.code


def test_the_notebooks_code_runs():
    scope = {}
    exec(welcome.NOTEBOOK.rsplit("\n", 1)[0], scope)  # all but the last line, whose widget is checked below
    assert isinstance(scope["model"], attnviz.Model) and scope["res"].traces  # keep=True kept the intermediates
    assert isinstance(eval(welcome.NOTEBOOK.rsplit("\n", 1)[1].split("#")[0], scope), AttentionWidget)


def test_what_the_notebook_way_in_promises_is_there():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith("anywidget") for dep in extras["notebook"])  # pip install ".[notebook]"
    notebook = json.loads((ROOT / "notebooks" / "attnviz_in_a_notebook.ipynb").read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    for promised in ('view="model"', 'attn_implementation="eager"', 'load_model("tiny-bart")', "attnviz.save_html("):
        assert promised in code, promised
