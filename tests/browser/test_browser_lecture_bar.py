"""The lecture bar on a projector (?present=1, 1024×768 and 1366×768) is whole below Streamlit's header, which holds
the menu: every part of the bar (Previous, the step and its title, Next, Students) starts under the header's bottom
edge, with a one-line and a two-line step title. The bar sat at 64-112 px under a header of 0-71 px: the buttons' tops
and a two-line title's first line were cut. Screenshots in test-artifacts/lecture_bar_<w>x<h>_<lines>.png."""

import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, upload_plan, wait_for_app_idle, wait_for_text

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
