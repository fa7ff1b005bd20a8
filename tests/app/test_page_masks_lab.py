"""The masks lab in Streamlit's AppTest: gallery, pair counts, padding demo, custom mask editor, bad masks."""

import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_heatmap, has_heatmap, page_text, run_app

import attnviz
from attnviz.draw.line_chart import chart_lines
from attnviz.engine.mask_kinds import MASKS, parse_mask
from attnviz.engine.masks import causal_mask
from attnviz.lessons.masks.editor import mask_to_spec, position_names
from attnviz.lessons.masks.gallery import gallery_specs

PAGE = "app_pages/masks.py"
TEXT = "the cat sat on the mat"
TOY = {"model": "toy", "text": TEXT}
ATOL = 0.5 / 65534 + 1e-7  # weights of 8 tokens travel as uint16: to half a step of 1/65534


@pytest.fixture(scope="module")
def toy():
    return attnviz.load_model("toy")


@pytest.fixture(scope="module")
def toy_page():
    at = run_app(TOY, page=PAGE)
    assert_healthy(at)
    return at


def panels(at, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(M as drawn, read back as 1 allowed (0) / 0 forbidden (−∞); the weights drawn in [0, 1]) of a card."""
    m, rows, cols = drawn_heatmap(at, f"{key}_mask")
    assert set(np.unique(m)) <= {0.0, -np.inf} and len(rows) == len(cols) == m.shape[0]
    return (m == 0).astype(int), drawn_heatmap(at, f"{key}_weights")[0]


def test_page_loads_with_the_bundled_model():
    at = run_app(page=PAGE)
    assert_healthy(at)
    assert all(has_heatmap(at, f"masks_gallery_{kind}_weights") for kind in tuple(MASKS))


def test_gallery_shows_every_mask_with_its_real_weights(toy, toy_page):
    text = page_text(toy_page)
    for kind, spec in gallery_specs(custom=mask_to_spec(causal_mask(8))).items():
        assert f"**{MASKS[kind].title}**" in text
        res = toy.run(TEXT, mask=spec)
        m, w = panels(toy_page, f"masks_gallery_{kind}")
        np.testing.assert_allclose(w, res.attentions[0, 0].numpy(), atol=ATOL, err_msg=kind)
        expected = np.ones_like(m) if res.mask is None else res.mask.numpy()
        np.testing.assert_array_equal(m, expected, err_msg=kind)


def test_attended_pairs_equal_the_mask_sums(toy_page):
    text = page_text(toy_page)
    n = 8  # [CLS] the cat sat on the mat [SEP]
    for kind, spec in gallery_specs(custom=mask_to_spec(causal_mask(n))).items():
        m, _ = panels(toy_page, f"masks_gallery_{kind}")
        size = n + (2 if kind == "padding" else 0)
        mask = parse_mask(spec, size)
        pairs = size * size if mask is None else int(mask.sum())
        assert m.sum() == pairs, kind
        assert f"**{pairs:,}** of n² = {size}² = {size * size:,} pairs scored" in text, kind


def test_gallery_sliders_change_the_masks(toy):
    at = run_app(TOY, page=PAGE)
    at.slider(key="masks_window").set_value(1).run()
    assert_healthy(at)
    m, w = panels(at, "masks_gallery_window")
    np.testing.assert_array_equal(m, parse_mask("window:1", 8).numpy())
    np.testing.assert_allclose(w, toy.run(TEXT, mask="window:1").attentions[0, 0].numpy(), atol=ATOL)
    assert "**22** of n² = 8² = 64 pairs scored" in page_text(at)


def cost_chart(at) -> str:
    charts = [m.value for m in at.markdown if 'class="av-line"' in m.value]
    assert len(charts) == 1
    return charts[0]


def test_cost_chart_shows_quadratic_full_attention(toy_page):
    lines = chart_lines(cost_chart(toy_page))
    full, window = lines[MASKS["none"].title], lines[MASKS["window"].title]
    assert full[0] == 64 and full[-1] == 512 * 512 and window[-1] == 512 * 5 - 6
    assert "O(n²)" in page_text(toy_page)


def test_log_log_cost_chart_stops_near_the_data():
    at = run_app({**TOY, "masks_axes": "log-log"}, page=PAGE)
    assert_healthy(at)
    x_tick = r'font-size="13" text-anchor="middle" fill="currentColor">([^<]+)<'  # the x axis's tick labels
    ticks = [float(t.replace("k", "e3")) for t in re.findall(x_tick, cost_chart(at))]
    assert ticks == [10, 100]  # the data run from n = 8 to 512: decades 10 and 100, not on to 10¹⁰


def test_padding_demo_pad_columns_are_exactly_zero(toy, toy_page):
    encs, weights = toy.run_batch(["The cat sat.", "The quick brown fox jumps over the lazy dog by the river bank."])
    short = encs[0]
    assert short.n_pad > 0 and weights[0, :, :, :, -short.n_pad:].abs().max() == 0  # attnviz: exactly 0
    z = drawn_heatmap(toy_page, "masks_pad_heatmap_0")[0]
    assert z.shape[1] == len(short.ids) and np.all(z[:, -short.n_pad:] == 0)
    assert np.all(z[:, : -short.n_pad].sum(1) > 0.9)  # the real keys keep (to the 0.001) all the weight
    assert "exactly zero" in page_text(toy_page)


def test_padding_demo_follows_its_two_sentences(toy):
    at = run_app({**TOY, "masks_pad_a": "one two three four five six seven", "masks_pad_b": "eight"}, page=PAGE)
    assert_healthy(at)
    z0 = drawn_heatmap(at, "masks_pad_heatmap_0")[0]
    z1 = drawn_heatmap(at, "masks_pad_heatmap_1")[0]
    assert z0.shape == z1.shape == (9, 9) and np.all(z1[:, 3:] == 0) and np.all(z0 > 0)
    at.text_input(key="masks_pad_b").input("").run()
    assert_healthy(at)
    assert any("Type a sentence in both boxes" in w.value for w in at.warning)


def edit_custom_mask(at, edits: dict):
    """Apply cell edits {row: {column name: bool}} to the editor the way the browser reports them."""
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    return at.run()


def test_editing_the_custom_mask_changes_the_weights(toy):
    at = run_app(TOY, page=PAGE)
    names = position_names(toy.run(TEXT).labels)
    before = panels(at, "masks_custom_result")[1]
    edit_custom_mask(at, {0: {names[5]: True}, 3: {names[7]: True}})  # let [CLS] see 'the', 'sat' see [SEP]
    assert_healthy(at)
    mask = causal_mask(8)
    mask[0, 5] = mask[3, 7] = True
    m, w = panels(at, "masks_custom_result")
    np.testing.assert_array_equal(m, mask.numpy())
    np.testing.assert_allclose(w, toy.run(TEXT, mask=mask).attentions[0, 0].numpy(), atol=ATOL)
    assert not np.allclose(w, before)
    assert mask_to_spec(mask) in [c.value for c in at.code]
    gallery_m, _ = panels(at, "masks_gallery_custom")  # the gallery's custom card follows
    np.testing.assert_array_equal(gallery_m, mask.numpy())


def test_a_row_that_forbids_everything_shows_the_policy(toy):
    at = run_app(TOY, page=PAGE)
    names = position_names(toy.run(TEXT).labels)
    edit_custom_mask(at, {4: {name: False for name in names}})
    assert_healthy(at)
    _, w = panels(at, "masks_custom_result")
    assert np.all(w[4] == 0) and np.all(np.delete(w, 4, axis=0).sum(1) > 0.99)
    policy = [x.value for x in at.warning if "forbid every key" in x.value]
    assert policy and "zero weights and a zero output" in policy[0] and "4·on (‖output‖ = 0.000)" in policy[0]
    at.multiselect(key="masks_dead_rows").set_value([1]).run()  # the quick way: rows 1 and 4 empty
    assert "1·the" in next(x.value for x in at.warning if "forbid every key" in x.value)


def test_a_custom_mask_of_the_wrong_size_is_explained(toy):
    at = run_app({**TOY, "mask": "custom", "custom": "10/01"}, page=PAGE)
    assert_healthy(at)
    errors = [e.value for e in at.error]
    assert any("does not fit" in e and "2×2" in e and "8 tokens" in e for e in errors), errors
    m, _ = panels(at, "masks_custom_result")  # the editor starts from causal instead
    np.testing.assert_array_equal(m, causal_mask(8).numpy())


def test_a_text_too_long_for_the_editor_says_so():
    at = run_app({"model": "toy", "text": " ".join(f"w{i}" for i in range(30))}, page=PAGE)
    assert_healthy(at)
    assert any("at most 24 tokens" in i.value and "32" in i.value for i in at.info)
    assert not at.data_editor and has_heatmap(at, "masks_gallery_custom_weights")


def test_use_in_the_sidebar_sets_the_shared_custom_mask(toy):
    at = run_app(TOY, page=PAGE)
    names = position_names(toy.run(TEXT).labels)
    edit_custom_mask(at, {0: {names[1]: True}})
    at.button(key="masks_editor_use").click().run()
    assert_healthy(at)
    mask = causal_mask(8)
    mask[0, 1] = True
    assert at.selectbox(key="mask").value == "custom"
    assert "custom:" + at.text_input(key="custom").value == mask_to_spec(mask)


def test_a_card_whose_mask_cannot_run_says_why_and_the_others_still_draw(toy):
    """At the model's token limit the padding card cannot add its [PAD] tokens: that card explains, every other
    card (whose runs are made before any card is drawn) still shows its weights."""
    words = [f"w{i}" for i in range(100)]
    text = " ".join(words[: next(k for k in range(1, 100) if len(toy.encode(" ".join(words[:k])).ids) == 64)])
    at = run_app({"model": "toy", "text": text}, page=PAGE)
    assert_healthy(at)
    messages = [m.value for m in [*at.error, *at.warning]]
    assert any("Padding to 66 tokens is more than the model's 64" in m for m in messages), messages
    assert not has_heatmap(at, "masks_gallery_padding_weights")
    for kind in set(tuple(MASKS)) - {"padding"}:
        assert has_heatmap(at, f"masks_gallery_{kind}_weights"), kind
