"""The generated sweep, a seeded sample of it: every page opened with generated links (one or two of its URL keys, each
with a value from its own range's edges and just past them, wrong types, empty values, lengths far past each limit,
every Unicode category, NUL and control characters, markup, TeX and script, repeated keys) and every typed box of
every page given generated entries. Each run must end in a drawn page or a clear message (tests/link_sweep.problems).

The keys are found, not listed (tests/link_sweep.py): a page that adds a key is swept without a new test. The long run
is benchmarks/sweep_links.py.
"""

import pytest
from apptest_helpers import app_menu
from link_sweep import page_keys, pages, run_case, shorten, sweep_links, sweep_typing, type_case

from ui.across_pages import shared_keys

LINKS_PER_PAGE = 4  # generated links per page in the suite (benchmarks/sweep_links.py: as many as asked)
TYPED_PER_PAGE = 2  # generated entries into the page's boxes
PATHS = {file: path or "explorer" for file, path, _ in app_menu()}


def _sweep(kind, file, count, record_property):
    cases = []

    def on_case(case, problems, at, seconds):
        cases.append(case)
        assert not problems, f"/{PATHS[file]} with {shorten(case, 300)}:\n" + "\n".join(problems)

    kind(file, count, pages().index(file), on_case)
    record_property("cases", len(cases))
    print(f"{PATHS[file]}: {len(cases)} cases")  # shown with -s or -rP: the count of cases per page
    return cases


# What the long run (benchmarks/sweep_links.py) found, kept as cases of their own: (page, a link, or a box and what is
# typed into it). 2026-11-27, seed 20261127, 120 links and 24 entries a page: a hub name huggingface_hub refuses
# (a traceback with a cap on weights), one new token on KV cache (a slider with equal ends), and two the check itself
# got wrong (a typed factor reruns the page's parts alone; a room code quoted upper-cased).
FOUND = [
    ("decoder_block", {"model": "other", "model_path": "lȡύ"}, None),
    ("explorer", {"model": "other", "model_path": "a--b"}, None),
    ("kv_cache", {"kv_new": "1"}, None),
    ("follow", {}, ("follow_room", "NaN")),
    ("explorer", {}, ("factor", 0.05)),
    ("explorer", {}, ("factor", 67.91428001354231)),
]


@pytest.mark.parametrize("path, link, typed", FOUND, ids=[f"{p}-{shorten(t or q, 40)}" for p, q, t in FOUND])
def test_what_the_long_run_found_ends_in_a_drawn_page_or_a_clear_message(path, link, typed):
    file = next(f for f, p in PATHS.items() if p == path)
    found, _, _ = type_case(file, *typed, link) if typed else run_case(file, link)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("file", pages(), ids=PATHS.get)
def test_every_generated_link_ends_in_a_drawn_page_or_a_clear_message(file, record_property):
    assert len(_sweep(sweep_links, file, LINKS_PER_PAGE, record_property)) == LINKS_PER_PAGE


@pytest.mark.parametrize("file", pages(), ids=PATHS.get)
def test_every_generated_entry_in_a_box_ends_in_a_drawn_page_or_a_clear_message(file, record_property):
    cases = _sweep(sweep_typing, file, TYPED_PER_PAGE, record_property)
    assert len(cases) == (TYPED_PER_PAGE if page_keys(file).typed else 0)


def test_the_keys_are_found_from_what_each_page_draws_and_reads():
    """The discovery itself: the sidebar's bound widgets with their own ranges, a key only the page's code reads (Find
    the head's token links), keys drawn only for some choice (a mask's parameters), and the typed boxes."""
    explorer = page_keys("app_pages/explorer.py")
    assert {"model", "text", "mask", "scaled", "factor", "layer", "heads"} <= set(explorer.keys)
    assert explorer.keys["factor"].kind == "number_input" and (explorer.keys["factor"].low,
                                                               explorer.keys["factor"].high) == (0.0, 100.0)
    assert explorer.keys["text"].max_chars == 20_000
    assert {"window", "custom", "globals"} <= set(explorer.keys)  # drawn only when their mask is chosen
    assert explorer.typed["custom"].kind == "text_input" and explorer.opened_by["custom"] == {"mask": "custom"}
    find_head = page_keys("app_pages/find_head.py")
    assert {"fh_query", "fh_key", "fh_top"} <= set(find_head.keys) and find_head.keys["fh_query"].kind == "read"
    for file in pages():  # every page that draws the shared sidebar is swept on its keys
        if "model" in page_keys(file).keys:
            assert {"model", "text", "mask"} <= set(page_keys(file).keys) <= set(page_keys(file).keys) | set(shared_keys())
