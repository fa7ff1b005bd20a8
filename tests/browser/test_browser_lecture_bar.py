"""The lecture bar on a projector (?present=1, 1024×768 and 1366×768) is whole below Streamlit's header, which holds
the menu: every part of the bar (Previous, the step and its title, Next, Students) starts under the header's bottom
edge, with a one-line and a two-line step title. The bar sat at 64-112 px under a header of 0-71 px: the buttons' tops
and a two-line title's first line were cut. Screenshots in test-artifacts/lecture_bar_<w>x<h>_<lines>.png.

Before Reveal the projector brings its question into view: the default plan's step 2, on a projector's first load of
its room's link, keeps its bar whole and its question, the number it asks about, its options and Reveal on the screen
(the cookie that holds the presenter key took a row's gap above the bar, the question ran 16 px past the screen, and
the scroll that brought it up put the bar under the header); a question taller than the screen is brought up only as
far as the bar stays whole. Screenshots in test-artifacts/lecture_question_<w>x768.png."""

from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import app_menu
from browser_helpers import (
    IDLE,
    ROOT,
    chromium_page,
    exceptions_on,
    people_browser,
    start_the_room,
    upload_plan,
    wait_for_app_idle,
    wait_for_text,
)

from attnviz.lecture import load_plan, step_link
from attnviz.paths import LECTURES
from ui.lecture.plans import upload_id

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
# a step title of one line at both sizes, and one of two lines at each size (the bar is wider at 1366 px)
TITLES = ["Why divide by √d_k?", "The decoder block: masked self-attention, cross-attention to the source, feed-forward",
          "The decoder block, read from the bottom up: masked self-attention over the tokens so far, cross-attention "
          "to the source"]
TWO_LINES = {1024: 2, 1366: 3}  # the step whose title takes two lines at this width
PLAN = 'title = "The bar\'s titles"\n' + "".join(f'[[step]]\ntitle = "{title}"\npage = "/transformer_map"\n'
                                                  for title in TITLES)

# JS: the header's bottom edge, each part of the bar's top edge, and the number of lines of the step's title
BAR = """() => {
  const box = e => e.getBoundingClientRect();
  const where = document.querySelector('.attnviz-lecture-where');
  const students = [...document.querySelectorAll('[data-testid="stPopover"] button')]
    .find(b => b.innerText.includes('Students'));
  const parts = [...document.querySelectorAll('.attnviz-lecture-bar, .attnviz-lecture-bar > *'), students];
  return {header: box(document.querySelector('[data-testid="stHeader"]')).bottom,
          tops: parts.map(e => [e === students ? 'Students' : e.className, box(e).top]),
          lines: Math.round(box(where).height / parseFloat(getComputedStyle(where).lineHeight))};
}"""


@pytest.mark.parametrize("width", [1024, 1366])
def test_the_lecture_bar_is_whole_below_the_header(server, tmp_path, width):
    plan = tmp_path / "bar_titles.toml"
    plan.write_text(PLAN, encoding="utf-8")
    lecture = upload_id(plan.read_bytes())
    with chromium_page(width, 768) as page:
        upload_plan(page, server, plan)
        wait_for_text(page, "The bar's titles")
        problems = []
        for step, lines in ((1, 1), (TWO_LINES[width], 2)):
            page.goto(f"{server}/transformer_map?lecture={lecture}&step={step}&present=1")
            wait_for_text(page, f"Step {step} of {len(TITLES)}")
            wait_for_app_idle(page)
            found = page.evaluate(BAR)
            assert found["lines"] == lines, f"step {step}'s title takes {found['lines']} lines at {width} px"
            problems += [f"{width} px, step {step}: {name!r} starts at {top:.0f} px, under the header (to "
                         f"{found['header']:.0f} px)" for name, top in found["tops"] if top < found["header"]]
            page.screenshot(path=str(ARTIFACTS / f"lecture_bar_{width}x768_{lines}line.png"),
                            clip={"x": 0, "y": 0, "width": width, "height": 240})
            assert not exceptions_on(page)
    assert not problems, "\n".join(problems)


# JS: the bar's parts' tops and the header's bottom (BAR), and the bottom of the question's lines (the question, what it
# refers to, its options) and of its Reveal button, once the question's scroll into view has had its 5 s
QUESTION = """() => {
  const box = e => e.getBoundingClientRect();
  const lines = [...document.querySelectorAll('.st-key-lecture_question .lq p, .st-key-lecture_question .lq li')];
  return {lines: lines.length, bottom: Math.max(...lines.map(e => box(e).bottom)),
          reveal: box(document.querySelector('.st-key-lecture_reveal button')).bottom, screen: window.innerHeight};
}"""
SCROLLED = "() => performance.now() - (window.__attnvizQuestionInView || 1e12) > 5300"  # ui/lecture/question.py
LONG = 'a long option that a lecturer wrote out in full, so that the projector has to wrap it over two lines'
TALL = ('title = "A tall question"\n[[step]]\ntitle = "Too tall for one screen"\npage = "/transformer_map"\n'
        'question = "Which of these eight long options is the right one, read carefully before you answer?"\n'
        'predict_first = true\nfocus = "transformer_map"\nanswer = { kind = "choice", expected = "' + LONG + ' 1", '
        'options = [' + ", ".join(f'"{LONG} {i}"' for i in range(1, 9)) + "] }\n")


def bar_cut(found: dict, where: str) -> list[str]:
    return [f"{where}: {name!r} starts at {top:.1f} px, under the header (to {found['header']:.1f} px)"
            for name, top in found["tops"] if top < found["header"]]


def start_room(page, server: str, plan_id: str) -> tuple[str, str]:
    """The lecturer starts the plan's room on the Lecture page -> (code, presenter key)."""
    page.goto(f"{server}/lecture?lecture={plan_id}")
    wait_for_text(page, "Lecture mode")
    page.wait_for_function(IDLE, timeout=120_000, polling=100)
    link = start_the_room(page)
    query = dict(parse_qsl(urlsplit(link.get_attribute("href")).query))
    return query["room"], query["key"]


def test_the_projectors_question_is_in_view_with_the_bar_whole_on_its_first_load(server):
    plan = load_plan(LECTURES / "attention.toml", {path: title for _, path, title in app_menu()})
    problems = []
    with people_browser() as browser:
        room, key = start_room(browser.new_context(viewport={"width": 1024, "height": 768}).new_page(), server,
                               "attention")
        for width in (1024, 1366):
            # the projector's own browser, its first load of the link: the presenter key traded for a cookie
            page = browser.new_context(viewport={"width": width, "height": 768}).new_page()
            page.goto(server + "/" + step_link(plan.step(2), lecture="attention", number=2, room=room, key=key)[2:])
            page.locator(".st-key-lecture_reveal button").first.wait_for(timeout=120_000)
            wait_for_app_idle(page)
            page.wait_for_function(SCROLLED, timeout=60_000, polling=100)
            page.screenshot(path=str(ARTIFACTS / f"lecture_question_{width}x768.png"))
            bar, question = page.evaluate(BAR), page.evaluate(QUESTION)
            problems += bar_cut(bar, f"{width} px")
            if question["lines"] < 4 or max(question["bottom"], question["reveal"]) > question["screen"] + 1:
                problems.append(f"{width} px: the question, its number, options or Reveal run past the screen: "
                                f"{question}")
            assert not exceptions_on(page)
    assert not problems, "\n".join(problems)


def test_a_question_taller_than_the_screen_is_brought_up_only_as_far_as_the_bar_stays_whole(server, tmp_path):
    plan = tmp_path / "tall_question.toml"
    plan.write_text(TALL, encoding="utf-8")
    with chromium_page(1024, 768) as page:
        upload_plan(page, server, plan)
        wait_for_text(page, "A tall question")
        page.goto(f"{server}/transformer_map?lecture={upload_id(plan.read_bytes())}&step=1&present=1")
        page.locator(".st-key-lecture_reveal button").first.wait_for(timeout=120_000)
        page.wait_for_function(SCROLLED, timeout=60_000, polling=100)
        bar, question = page.evaluate(BAR), page.evaluate(QUESTION)
        assert question["reveal"] > question["screen"], question  # the case: it cannot all be on the screen
        assert not bar_cut(bar, "1024 px"), bar_cut(bar, "1024 px")
        top = min(t for _, t in bar["tops"])  # the bar's row: its Students button starts a little higher
        assert top - bar["header"] < 1.5, f"brought up less than the bar allows: its top at {top} px, {bar}"
        page.screenshot(path=str(ARTIFACTS / "lecture_question_tall_1024x768.png"))
