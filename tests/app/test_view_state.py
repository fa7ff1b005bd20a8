"""The view state (ui/state.py) and the pickers (ui/pickers.py): one state per run, every model choice meaning the
same model everywhere, and no page an error with its default settings."""

import pytest
from apptest_helpers import (
    assert_healthy,
    chart_specs,
    drawn_heatmap,
    heatmap_payloads,
    lesson_menu,
    misplaced_settings,
    page_text,
    run_app,
)

import ui.state
from attnviz.engine.models.catalog import OFFERED

TEXT = "The cat sat on the mat."
SECOND = "A dog barked at the moon."


@pytest.mark.parametrize("name", list(OFFERED))
def test_every_offered_model_works_offline_in_the_sidebar(name):
    at = run_app({"model": name, "text": TEXT})
    assert_healthy(at)
    assert not at.error, [e.value for e in at.error]
    assert "grid" in heatmap_payloads(at)


@pytest.mark.parametrize("name", list(OFFERED))
def test_every_offered_model_works_offline_on_compare_side_b(name):
    """Side B's 'tiny-llama' is attnviz's own tiny Llama, as in the sidebar, never a hub name."""
    at = run_app({"text": TEXT, "cmp_b_model": name, "cmp_b_text": TEXT}, page="app_pages/compare.py")
    assert_healthy(at)
    assert not at.error, [e.value for e in at.error]
    _, rows, _ = drawn_heatmap(at, "cmp_heatmap_b")
    assert rows and at.selectbox(key="cmp_b_model").value == name
    loaded = OFFERED[name].spec or "all-MiniLM-L6-v2"
    assert f"B: {'toy' if name == 'toy-nopos' else loaded}" in str(heatmap_payloads(at)["cmp_heatmap_b"][:400])


@pytest.mark.parametrize("file, path, title", lesson_menu(), ids=[path or "explorer" for _, path, _ in lesson_menu()])
def test_every_page_draws_a_chart_or_a_formula_with_its_defaults(file, path, title):
    at = run_app({}, page=file)
    assert_healthy(at)
    assert not at.error, (path, [e.value for e in at.error])
    assert at.title and at.title[0].value  # the page itself, not the explorer it might have fallen back to
    assert chart_specs(at) or at.latex or any("<svg" in m.value for m in at.markdown), path  # an SVG: the map
    assert not misplaced_settings(at, set()), path  # the layer and head pickers are on the page


def scoped_reruns(monkeypatch) -> list:
    """The scopes the scale controls' callback asks st.rerun for (then does what it asked)."""
    asked, real = [], ui.state.st.rerun

    def record(scope="app"):
        asked.append(scope)
        return real(scope)

    monkeypatch.setattr(ui.state.st, "rerun", record)
    return asked


def test_a_switch_flip_alone_reruns_only_the_heatmap_parts(monkeypatch):
    at = run_app({"model": "toy", "text": TEXT})
    asked = scoped_reruns(monkeypatch)
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    assert asked == [["explorer_grid", "explorer_why", "explorer_focus"]]


def test_a_switch_flip_that_arrives_with_a_new_sentence_reruns_the_whole_page(monkeypatch, toy):
    """Two changes in one rerun: the parts alone would draw the new scale with the old page around them, so the
    callback leaves the rerun whole (AppTest always reruns whole; what is checked is what the callback asked)."""
    at = run_app({"model": "toy", "text": TEXT})
    asked = scoped_reruns(monkeypatch)
    at.sidebar.text_area(key="text").input(SECOND)
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    assert asked == []
    drawn, rows, _ = drawn_heatmap(at, "focus_head")
    assert rows == toy.run(SECOND).labels
    assert f"**{len(rows)} tokens**" in page_text(at)


def test_the_state_names_the_mask_applied_and_says_when_it_differs_from_the_one_asked():
    """An empty custom mask means the causal pattern for this text; one that does not fit says so and shows none."""
    at = run_app({"model": "toy", "text": TEXT, "mask": "custom", "custom": "10/11"})
    assert_healthy(at)
    assert any("Showing no mask instead" in e.value for e in at.error)
    assert ui.state.DRAWN in at.session_state
    view, _ = at.session_state[ui.state.DRAWN]
    assert (view.mask_choice, view.mask_spec) == ("custom:10/11", "none")
