"""The Transformer map: one SVG with every block of the architecture, each block a relative link that opens a page of
the app's menu in the state the block names (each state key read by that page's widgets)."""

import re
from html import unescape
from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import app_menu, assert_healthy, run_app

from attnviz.lessons.explorer.selection import selection_from_params
from attnviz.lessons.transformer_map.blocks import BLOCKS
from attnviz.lessons.transformer_map.figure import map_html, map_svg
from ui.state import SELECTION

FILES = {path: file for file, path, _ in app_menu()}
NOT_WIDGETS = {"fig"}  # read by ui/focus.py, on a projector only
SELECTION_KEYS = ("sbs_head", "sbs_query", "sbs_key")  # the explorer's selected cell


def links_in(svg: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'<a href="([^"]+)"', svg)]


def test_the_page_draws_the_figure_with_a_link_per_block():
    at = run_app({}, page="app_pages/transformer_map.py")
    assert_healthy(at)
    assert not at.error
    body = next(m.value for m in at.markdown if "<svg" in m.value)
    svg = body[body.index("<svg"):body.index("</svg>")]
    assert links_in(svg) == [b.link() for b in BLOCKS]
    words = " ".join(unescape(t) for t in re.findall(r">([^<>]+)</text>", svg))
    for label in ("Input embedding", "+ positions", "Multi-head self-attention", "Add & Norm", "Feed-forward",
                  "Masked self-attention", "Cross-attention", "Output embedding", "Linear", "Softmax", "N×"):
        assert label in words, label
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", ""), "no outside request"


def test_every_block_links_inside_the_app_and_the_list_under_it_says_which_page():
    titles = {path: title for _, path, title in app_menu()}
    html = map_html(titles)
    for b in BLOCKS:
        assert b.link().startswith("./") and b.page in FILES, b.key
        assert f"<i>{titles[b.page]}</i>" in html
    assert map_svg().count("<a ") == len(BLOCKS)


def test_the_list_under_the_map_names_each_page_once():
    """"→ *KV cache*: KV cache: a decoder takes…": what a page shows follows its title without repeating it."""
    titles = {path: title for _, path, title in app_menu()}
    items = re.findall(r"→ <i>([^<]+)</i>: ([^<]+)</li>", unescape(map_html(titles)))
    assert len(items) >= len({(b.label, b.page) for b in BLOCKS}) - 1
    for title, shows in items:
        first = shows.lower().removeprefix("the ")
        assert not first.startswith(title.lower().removeprefix("the ")), f"{title}: {shows}"


@pytest.mark.parametrize("block", sorted({b.link(): b for b in BLOCKS}.values(), key=lambda b: b.key),
                         ids=lambda b: b.key)
def test_each_block_opens_its_page_in_its_state(block):
    url = urlsplit(block.link())
    state = parse_qsl(url.query)
    at = run_app(dict(state), page=FILES[url.path.removeprefix("./")])
    assert_healthy(at)
    assert not at.error, [e.value for e in at.error]
    for key, value in state:
        if key in NOT_WIDGETS or (block.page == "" and key in SELECTION_KEYS):
            continue
        shown = at.session_state[key]
        assert str(shown).lower() == value.lower(), (key, shown, value)
    if block.page == "":
        assert at.session_state[SELECTION] == selection_from_params(dict(state))
