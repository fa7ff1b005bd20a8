"""The presenter's row of controls (ui.page.presenter_controls): every label names what the page computes with,
on a fresh load (a lecture step's link) and after a change; and a page shows only the shared settings it uses. On a
projector, a page's short tables are plain tables, in the projector's type."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import assert_healthy, lesson_menu, misplaced_settings, page_text, run_app

from ui.tables import PROJECTOR_ROWS

EXPLORER = "app_pages/explorer.py"
TEXT = "The animal didn't cross the street because it was too tired."

# what the button must read for each mask in a link, on an encoder (MiniLM) and on a decoder (tiny-llama, whose
# built-in causal mask applies whatever is chosen): written out here, not computed by the code under test
ON_AN_ENCODER = {
    "none": "Mask: none", "causal": "Mask: causal", "padding": "Mask: padding 3", "window": "Mask: window 2",
    "strided": "Mask: strided 3", "global": "Mask: global + local 1", "random": "Mask: random 0.3",
    "custom": "Mask: custom",
}
ON_A_DECODER = {"none": "Mask: built-in causal", "causal": "Mask: built-in causal",
                "window": "Mask: built-in causal + window 2"}


def popover_labels(at) -> list[str]:
    return [p.proto.popover.label for p in at.get("popover")]


def in_row(at) -> set[str]:
    """Which shared settings sit in the page (the presenter's row), not in the sidebar."""
    sidebar = {w.key for kind in ("text_area", "selectbox", "toggle") for w in getattr(at.sidebar, kind)}
    main = {w.key for kind in ("text_area", "selectbox", "toggle") for w in getattr(at.main, kind)}
    found = {name for name, key in (("text", "text"), ("model", "model"), ("scale", "scaled")) if key in main - sidebar}
    if any(label.startswith("Mask: ") for label in popover_labels(at)):
        found.add("mask")
    return found


@pytest.mark.parametrize("mask", list(ON_AN_ENCODER))
def test_a_fresh_load_names_the_links_mask_and_scaling(mask):
    scaled = "false" if mask in ("causal", "window", "custom") else "true"
    at = run_app({"layer": "4", "mask": mask, "scaled": scaled, "present": "1", "text": TEXT})
    assert_healthy(at)
    assert popover_labels(at) == [ON_AN_ENCODER[mask]]
    assert at.toggle(key="scaled").value is (scaled == "true")
    said = page_text(at)
    if mask == "causal":  # the page's own sentence about the mask agrees with the button
        assert "causal: each token sees itself" in said.lower() or "causal" in said


def test_the_issues_link_no_longer_says_none():
    """The link of the issue: the button said "Mask: none (f…" while the heatmaps used a causal mask."""
    at = run_app({"layer": "4", "mask": "causal", "scaled": "false", "present": "1"})
    assert popover_labels(at) == ["Mask: causal"]


@pytest.mark.parametrize("mask", list(ON_A_DECODER))
def test_on_a_decoder_the_button_names_the_built_in_causal_mask(mask):
    at = run_app({"model": "tiny-llama", "mask": mask, "present": "1", "text": "one two three four five"})
    assert_healthy(at)
    assert popover_labels(at) == [ON_A_DECODER[mask]]


def test_a_mask_that_does_not_fit_the_text_is_named_as_the_one_applied():
    """A global token at position 40 of a 5-token text: the run applies no mask and says so; so does the button."""
    at = run_app({"mask": "global", "globals": "40", "present": "1", "model": "toy", "text": "the cat sat"})
    assert_healthy(at)
    assert popover_labels(at) == ["Mask: none"]
    assert "Showing no mask instead" in page_text(at)


def test_after_a_change_the_button_follows_the_picker():
    at = run_app({"present": "1", "model": "toy", "text": "the cat sat on the mat"})
    assert popover_labels(at) == ["Mask: none"]
    at.selectbox(key="mask").set_value("window").run()
    assert popover_labels(at) == ["Mask: window 2"]
    at.slider(key="window").set_value(1).run()
    assert popover_labels(at) == ["Mask: window 1"]


def test_an_own_factor_is_said_beside_the_switch():
    at = run_app({"present": "1", "model": "toy", "text": "the cat sat", "factor": "0.5"})
    assert_healthy(at)
    assert any("Scores × 0.5" in c.value for c in at.main.caption)


def test_the_factor_box_at_0_says_it_is_no_factor():
    """0.00 under "your own factor" read as "scores × 0": the label says what 0 means there."""
    at = run_app({"model": "toy", "text": "the cat sat"})
    box = at.number_input(key="factor")
    assert box.value == 0.0 and "0: none, the switch applies" in box.label


# which shared settings each page's figures use (ui.open_page's settings=), read from the pages' code by hand:
# written out here so that a page that starts or stops using one must say so in both places
USES = {
    "app_pages/why_attention.py": set(),
    "app_pages/attention_layer.py": set(),
    "app_pages/masks.py": {"text", "model", "scale"},
    "app_pages/scaling.py": {"text", "model", "mask"},
    "app_pages/additive.py": {"text", "model", "mask"},
    "app_pages/cross_attention.py": {"model", "mask", "scale"},
    "app_pages/kv_cache.py": {"model"},
    "app_pages/induction.py": {"text", "model"},
    "app_pages/find_head.py": {"text", "model", "mask", "scale"},
    "app_pages/step_by_step.py": {"text", "model", "mask", "scale"},
    EXPLORER: {"text", "model", "mask", "scale"},
    "app_pages/multihead.py": {"text", "model", "mask", "scale"},
    "app_pages/encoder_layer.py": {"text", "model", "mask", "scale"},
    "app_pages/decoder_block.py": set(),
    "app_pages/positions.py": {"text", "model", "mask", "scale"},
    "app_pages/efficient.py": {"text", "model", "mask", "scale"},
    "app_pages/compare.py": {"text", "model", "mask", "scale"},
    "app_pages/model_view.py": {"text", "model", "mask", "scale"},
    "app_pages/qk_space.py": {"text", "model", "mask", "scale"},
    "app_pages/head_claims.py": {"text", "model"},
    "app_pages/transformer_map.py": set(),
}


def test_every_lesson_page_declares_its_settings_here():
    assert {file for file, _, _ in lesson_menu()} == set(USES)


@pytest.mark.parametrize("page", list(USES), ids=[p.split("/")[-1][:-3] for p in USES])
def test_a_projectors_row_holds_only_the_settings_the_page_uses(page):
    at = run_app({"present": "1", "model": "toy", "text": "the cat sat on the mat"}, page=page)
    assert_healthy(at)
    row = in_row(at)
    uses = USES[page]
    own_model = [m.value for m in at.main.markdown if m.value.startswith("**Model:**")]
    if own_model:  # a lesson's own model: its name where the picker would be
        assert "model" in uses and row == uses - {"model"}, (row, own_model)
    else:
        assert row == uses
    unused = {"text", "model", "mask", "scale"} - uses
    notes = " ".join(i.value for i in at.sidebar.info)
    if uses and unused:
        assert "This page does not use" in notes
    for name, word in (("text", "Text"), ("model", "Model"), ("mask", "Mask"), ("scale", "scaling")):
        if uses and name in unused:
            assert word in notes, (name, notes)
    assert not misplaced_settings(at, row)  # no sentence sends the class to the sidebar for a setting in the row
    # a short table is a plain one in the projector's type, not the data grid's small type on a canvas (ui/tables.py);
    # an editor, and a table of links (they open another host's page), stay grids
    assert not [len(grid.value) for grid in at.dataframe if len(grid.value) <= PROJECTOR_ROWS
                and not grid.proto.editing_mode and '"type": "link"' not in grid.proto.columns]


def test_a_lessons_own_model_is_named_in_the_row_not_the_pickers_choice():
    at = run_app({"present": "1"}, page="app_pages/kv_cache.py")
    assert_healthy(at)
    assert [m.value for m in at.main.markdown if m.value.startswith("**Model:**")] == ["**Model:** attnviz-tiny-llama"]
    at = run_app({"present": "1", "model": "tiny-llama"}, page="app_pages/kv_cache.py")
    assert not [m.value for m in at.main.markdown if m.value.startswith("**Model:**")]
    assert "model" in in_row(at)


def test_the_masks_lab_shows_no_mask_setting():
    at = run_app({"present": "1", "model": "toy", "mask": "causal"}, page="app_pages/masks.py")
    assert not popover_labels(at)
    at = run_app({"model": "toy"}, page="app_pages/masks.py")  # the sidebar says the mask there is not used
    assert any("does not use the Mask" in i.value for i in at.sidebar.info)


# ---- sentences that name where a setting is changed, and titles that name the model's parts ---------------------


def test_cross_attention_names_where_its_dials_are():
    dials = lambda at: next(m.value for m in at.markdown if m.value.startswith("**Dials.**"))
    on_projector = run_app({"present": "1"}, page="app_pages/cross_attention.py")
    assert_healthy(on_projector)
    said = dials(on_projector)
    assert said.startswith("**Dials.** The scaling at the top of the page applies to every attention")
    assert "The mask at the top of the page applies only to the decoder's self-attention" in said
    assert "sidebar" not in said
    at_a_desk = run_app({}, page="app_pages/cross_attention.py")
    assert dials(at_a_desk).startswith("**Dials.** The sidebar's scaling applies")


@pytest.mark.parametrize(("model", "title"), [
    ("all-MiniLM-L6-v2", "The whole layer: residual, LayerNorm, feed-forward"),
    ("tiny-llama", "The whole layer: residual, RMSNorm, SwiGLU feed-forward"),
])
def test_the_layer_pages_title_names_the_models_norm_and_feed_forward(model, title):
    at = run_app({"model": model, "present": "1", "text": "one two three four"}, page="app_pages/encoder_layer.py")
    assert_healthy(at)
    assert at.title[0].value == title


@pytest.mark.parametrize(("page", "query"), [
    ("app_pages/additive.py", {"mask": "causal", "add_source": "model"}),  # the model's Q, K, V under a mask
    ("app_pages/positions.py", {"model": "tiny-llama"}),  # the model's own RoPE rotation: a RoPE model only
])
def test_sentences_shown_only_in_some_states_name_where_their_settings_are(page, query):
    at = run_app({"present": "1", "text": "the cat sat on the mat", **query}, page=page)
    assert_healthy(at)
    assert not misplaced_settings(at, in_row(at))
    said = page_text(at)
    assert {"app_pages/additive.py": "the mask at the top of the page applied to both",
            "app_pages/positions.py": "Query head 0 of layer 0 on your text"}[page] in said
