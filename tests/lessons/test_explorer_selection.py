"""The explorer's selected cell: read from a link, from a click, and clamped to the text with a message."""

from attnviz.lessons.explorer.selection import (
    Selection,
    clamp_selection,
    grid_ring,
    selection_from_click,
    selection_from_params,
    text_the_link_names,
)


def test_a_link_round_trips_and_garbage_is_no_selection():
    sel = Selection(head=3, query=4, key=1)
    params = sel.as_params(["a", "b", "c", "d", "e:f"])
    assert params == {"sbs_head": "3", "sbs_query": "4: e:f", "sbs_key": "1: b"}  # as Step by step's pickers show them
    assert selection_from_params(params) == sel
    assert selection_from_params({"sbs_head": "3", "sbs_query": "4", "sbs_key": "1"}) == sel
    assert selection_from_params({"sbs_head": "x", "sbs_query": "1", "sbs_key": "2"}) is None
    assert selection_from_params({"sbs_head": "1"}) is None


def test_a_click_names_the_head_its_panel_shows():
    assert selection_from_click({"panel": 1, "row": 2, "col": 0}, [4, 7]) == Selection(7, 2, 0)
    assert selection_from_click({"panel": 5, "row": 2, "col": 0}, [4, 7]) is None  # outside the grid
    assert selection_from_click(None, [4, 7]) is None


def test_a_stale_selection_is_clamped_and_said():
    sel, message = clamp_selection(Selection(2, 9, 12), n_tokens=5, n_heads=12)
    assert sel == Selection(2, 4, 4) and "outside this text of 5 tokens" in message
    sel, message = clamp_selection(Selection(20, 1, 1), n_tokens=5, n_heads=12)
    assert sel == Selection(11, 1, 1) and "head 20 does not exist" in message
    assert clamp_selection(Selection(1, 1, 1), 5, 12) == (Selection(1, 1, 1), None)
    assert clamp_selection(Selection(-1, 1, 1), 5, 12)[0] is None


def test_the_ring_follows_the_head_into_its_panel():
    assert grid_ring(Selection(7, 2, 1), [4, 7]) == {"panel": 1, "row": 2, "col": 1}
    assert grid_ring(Selection(5, 2, 1), [4, 7]) is None


def test_the_text_a_link_names_is_the_one_whose_tokens_it_spells():
    old, new = ["[CLS]", "it", "was", "[SEP]"], ["[CLS]", "so", "it", "was", "[SEP]"]
    assert text_the_link_names({"sbs_query": "1: it", "sbs_key": "2: was"}, [new, old]) == old  # a late address
    assert text_the_link_names({"sbs_query": "2: it", "sbs_key": "3: was"}, [new, old]) == new
    assert text_the_link_names({"sbs_query": "1", "sbs_key": "2"}, [new, old]) is None  # a bare position: on screen
    assert text_the_link_names({"sbs_query": "9: x", "sbs_key": "2: was"}, [new, old]) is None
    assert text_the_link_names({}, [new]) is None
