"""Short links (?v=<id>, ui/short_links.py): a page opened with one runs with the view's stored query; an unknown,
expired or malformed id gets a clear message and the page's defaults."""

import pytest
from apptest_helpers import assert_healthy, page_text, run_app

from ui.lecture.store import lecture_store
from ui.short_links import short_link

VIEW = "model=toy&text=The+dog+chased+the+ball+home.&layer=1"


def test_a_short_link_opens_the_view_it_stands_for():
    link = short_link(VIEW)
    assert link.startswith("v=") and len(link) <= 18
    at = run_app({link.split("=")[0]: link.split("=", 1)[1]}, page="app_pages/positions.py")
    assert_healthy(at)
    assert not at.warning or "short link" not in page_text(at)
    assert at.text_area(key="text").value == "The dog chased the ball home."
    assert at.selectbox(key="model").value == "toy"
    assert "v" not in at.query_params and at.query_params["text"] == "The dog chased the ball home."


@pytest.mark.parametrize("link_id, words", [
    ("abcdef1234", "unknown or has expired"),
    ("<script>", "is not a short link id"),
    ("x" * 5000, "is not a short link id"),
])
def test_an_unknown_or_malformed_short_link_says_so_and_opens_the_defaults(link_id, words):
    at = run_app({"v": link_id}, page="app_pages/positions.py")
    assert_healthy(at)
    warnings = "\n".join(str(w.value) for w in at.warning)
    assert words in warnings and "short link" in warnings
    assert "x" * 50 not in warnings  # a crafted id is not echoed whole
    assert at.selectbox(key="model").value != "toy"  # the defaults
    assert "v" not in at.query_params


def test_the_same_view_gets_the_same_short_link():
    assert short_link(VIEW) == short_link(VIEW) != short_link(VIEW + "&head=2")
    assert lecture_store().expand(short_link(VIEW)[2:]) == VIEW
