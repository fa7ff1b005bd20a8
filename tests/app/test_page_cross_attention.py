"""The Cross-attention page in AppTest: what it draws equals attnviz's numbers, for its default, attnviz-tiny-bart
writing its own answer (or reading a typed one), and for a tiny random BART given as the sidebar's "other" model."""

import html
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

import attnviz
from attnviz.engine.masks import causal_mask, window_mask
from attnviz.lessons.cross_attention import number_task as nt
from attnviz.lessons.why_attention.tiny_bart import TINY_BART, greedy_ids

PAGE = "app_pages/cross_attention.py"
SOURCE = "The cat sat on the mat."
TARGET = "A dog ran after the cat all day!"
DRAWN = 0.0005 + 1e-7  # weights travel as thousandths


def unescape_all(labels: list[str]) -> list[str]:
    return [html.unescape(s) for s in labels]  # plotly labels travel HTML-escaped ('<s>' -> '&lt;s&gt;')


def alerts(at, kind: str) -> str:
    return "\n".join(str(e.value) for e in getattr(at, kind))


@pytest.fixture(scope="module")
def bart_folder(tiny_model_folder):
    return str(tiny_model_folder("bart"))


@pytest.fixture(scope="module")
def bart(bart_folder):
    return attnviz.load_model(bart_folder)


def bart_query(folder: str, **extra) -> dict:
    return {"model": "other", "model_path": folder, "xa_source": SOURCE, "xa_target": TARGET, **extra}


# ---- the default: attnviz-tiny-bart writing its own answer ------------------------------------------


@pytest.fixture(scope="module")
def tiny_bart():
    return attnviz.load_model(TINY_BART)


def test_default_is_tiny_bart_with_its_own_answer_and_a_checked_badge(tiny_bart):
    at = run_app(page=PAGE)
    assert_healthy(at)
    assert not at.error
    source = nt.DEFAULT_SOURCE
    answer = greedy_ids(tiny_bart, tiny_bart.encode(source).ids)  # attnviz's own greedy decoding
    written = [tiny_bart.tokenizer.token_of(i)[0] for i in answer]
    assert written == ["<s>", "3", "4", "1", "2", "</s>"]
    assert "Its own answer:** `3412`" in page_text(at)
    res = tiny_bart.run(source, target="3 4 1 2")
    rows = ["</s>→<s>", "<s>→3", "3→4", "4→1", "1→2", "2→</s>"]
    assert at.selectbox(key="xa_layer").value == 1  # the last decoder layer, where the alignment is sharp
    for h in range(4):
        z, drawn_rows, cols = drawn_heatmap(at, f"xa_grid_{h}")
        np.testing.assert_allclose(z, res.cross_attentions[1, h].numpy(), atol=DRAWN)
        assert unescape_all(drawn_rows) == rows and unescape_all(cols) == res.source_labels
    assert at.selectbox(key="xa_focus").value == 1
    np.testing.assert_allclose(drawn_heatmap(at, "xa_focus_head")[0], res.cross_attentions[1, 1].numpy(), atol=DRAWN)
    np.testing.assert_allclose(drawn_heatmap(at, "xa_self")[0], res.attentions[1, 1].numpy(), atol=DRAWN)
    success = alerts(at, "success")
    assert "matches transformers" in success and "cross" in success
    text = page_text(at)
    assert "has no decoder" in alerts(at, "info") and "attnviz-tiny-bart" in alerts(at, "info")
    assert nt.ALIGNMENT_CLAIM in text and "1 to 3 numbers between 1 and 999,999,999" in text
    w = res.cross_attentions[1, 1]
    assert f"<s>→3: *three* ({float(w[1].max()):.2f})" in html.unescape(text)
    assert "projections applied across two sentences" not in text


def test_layer_head_and_an_example_sentence(tiny_bart):
    at = run_app({"xa_layer": "0", "xa_heads": "2"}, page=PAGE)
    at.selectbox(key="xa_example").set_value("785412360 (long)").run()
    assert_healthy(at)
    source = nt.EXAMPLES["785412360 (long)"]
    assert at.text_input(key="xa_source").value == source
    res = tiny_bart.run(source, target=" ".join("785412360"))
    assert [k for k in chart_specs(at) if k.startswith("xa_grid")] == ["xa_grid_0"]
    np.testing.assert_allclose(drawn_heatmap(at, "xa_grid_0")[0], res.cross_attentions[0, 2].numpy(), atol=DRAWN)
    assert "785412360" in page_text(at)


def test_two_quick_example_picks_end_on_the_second_whatever_order_the_callbacks_run(tiny_bart):
    """The browser can send a second pick together with the source box's value from before the first pick was written
    into it (it had not drawn that write yet). The box's callback and the picker's then both run, in an order
    Streamlit chooses; the page must end on the second pick's sentence either way, and a hand edit still clears the
    pick. (Before, the box's callback could clear the pick first, and the page stayed on the default sentence: a
    clean-clone CI run's browser test never saw 785412360.)"""
    first, second = "42, 700, 9", "785412360 (long)"
    at = run_app(page=PAGE)
    at.selectbox(key="xa_example").set_value(first).run()
    assert at.text_input(key="xa_source").value == nt.EXAMPLES[first]
    at.selectbox(key="xa_example").set_value(second)
    at.text_input(key="xa_source").set_value(nt.DEFAULT_SOURCE)  # the stale value sent with the second pick
    at.run()
    assert_healthy(at)
    assert at.text_input(key="xa_source").value == nt.EXAMPLES[second]
    assert at.selectbox(key="xa_example").value == second and "785412360" in page_text(at)
    at.text_input(key="xa_source").set_value("forty two").run()  # typed by hand: the pick no longer names it
    assert at.selectbox(key="xa_example").value is None and at.text_input(key="xa_source").value == "forty two"


def test_a_typed_target_is_teacher_forced_and_letters_are_refused(tiny_bart):
    at = run_app({"xa_typed": "true", "xa_target": "3400"}, page=PAGE)
    assert_healthy(at)
    res = tiny_bart.run(nt.DEFAULT_SOURCE, target="3400")
    z, rows, _ = drawn_heatmap(at, "xa_grid_3")
    np.testing.assert_allclose(z, res.cross_attentions[1, 3].numpy(), atol=DRAWN)
    assert unescape_all(rows)[-2:] == ["0→0", "0→</s>"]
    assert "your target" in page_text(at) and "3412" in page_text(at)  # its own answer stays in view
    at.text_input(key="xa_target").set_value("34 twelve").run()
    assert_healthy(at)
    assert "digits and commas only" in alerts(at, "error") and "'t'" in alerts(at, "error")


@pytest.mark.parametrize("source,message", [
    ("three thousand four hundred and twelve", "does not know 'and'"),
    ("the cat sat", "does not know 'the', 'cat', 'sat'"),
    ("  ", "Type a number in words"),
    ("one " * 120, "longer than attnviz-tiny-bart can read"),
])
def test_what_tiny_bart_cannot_read_gets_a_clear_message(source, message):
    at = run_app({"xa_source": source}, page=PAGE)
    assert_healthy(at)
    assert message in alerts(at, "error")
    assert not [k for k in chart_specs(at) if k.startswith("xa_")]


def test_past_the_training_range_it_warns_and_still_draws():
    at = run_app({"xa_source": "one , two , three , four"}, page=PAGE)
    assert_healthy(at)
    assert "longer than anything attnviz-tiny-bart was trained on" in alerts(at, "warning")
    assert "xa_grid_0" in chart_specs(at)


# ---- a tiny random BART folder as the sidebar's "other" model ------------------------------------


def test_bart_folder_shows_its_real_cross_attention_and_truth_badge(bart, bart_folder):
    at = run_app(bart_query(bart_folder), page=PAGE)
    assert_healthy(at)
    res = bart.run(SOURCE, target=TARGET)
    for h in range(2):
        z, rows, cols = drawn_heatmap(at, f"xa_grid_{h}")
        np.testing.assert_allclose(z, res.cross_attentions[0, h].numpy(), atol=DRAWN)
        assert unescape_all(rows) == res.labels and unescape_all(cols) == res.source_labels
    z, rows, _ = drawn_heatmap(at, "xa_self")
    np.testing.assert_allclose(z, res.attentions[0, 0].numpy(), atol=DRAWN)
    assert (np.triu(z, 1) == 0).all() and unescape_all(rows)[0] == "</s>"
    assert "matches transformers" in alerts(at, "success")
    assert "projections applied across two sentences" not in page_text(at)


def test_bart_decoder_layer_and_sidebar_mask(bart, bart_folder):
    at = run_app(bart_query(bart_folder, mask="window", window="1"), page=PAGE)
    at.selectbox(key="xa_layer").set_value(2)
    at.run()
    assert_healthy(at)
    res = bart.run(SOURCE, target=TARGET, mask="window:1")
    n = len(res.tokens)
    z, _, _ = drawn_heatmap(at, "xa_self")
    assert (z[~(causal_mask(n) & window_mask(n, 1)).numpy()] == 0).all()
    np.testing.assert_allclose(z, res.attentions[2, 0].numpy(), atol=DRAWN)
    np.testing.assert_allclose(drawn_heatmap(at, "xa_grid_1")[0], res.cross_attentions[2, 1].numpy(), atol=DRAWN)


def test_bart_with_a_padding_mask_says_so_and_uses_none(bart, bart_folder):
    at = run_app(bart_query(bart_folder, mask="padding"), page=PAGE)
    assert_healthy(at)
    assert "Padding masks are not offered" in alerts(at, "info")
    np.testing.assert_allclose(drawn_heatmap(at, "xa_grid_0")[0],
                               bart.run(SOURCE, target=TARGET).cross_attentions[0, 0].numpy(), atol=DRAWN)


# ---- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["xa_source", "xa_target"])
def test_empty_source_or_target_asks_for_it(bart_folder, which):
    at = run_app(bart_query(bart_folder, **{which: "  "}), page=PAGE)
    assert_healthy(at)
    assert ("source" if which == "xa_source" else "target") in alerts(at, "warning")
    assert not [k for k in chart_specs(at) if k.startswith("xa_")]


def test_invisible_target_is_a_clear_error(bart_folder):
    at = run_app(bart_query(bart_folder, xa_target="\u200b\u200b"), page=PAGE)
    assert_healthy(at)
    assert "Target:" in alerts(at, "error") and "invisible" in alerts(at, "error")


def test_target_too_long_for_bart_is_a_clear_error(bart_folder):
    at = run_app(bart_query(bart_folder, xa_target="the cat " * 80), page=PAGE)
    assert_healthy(at)
    assert "target is longer" in alerts(at, "error")


def test_missing_model_folder_falls_back_to_tiny_bart():
    at = run_app({"model": "other", "model_path": "/no/such/folder"}, page=PAGE)
    assert_healthy(at)
    assert "No folder" in alerts(at, "error")
    assert "attnviz-tiny-bart" in alerts(at, "info")
    assert "3412" in page_text(at) and "xa_grid_0" in chart_specs(at)


def test_other_pages_run_a_bart_as_its_encoder_and_say_so(bart, bart_folder):
    at = run_app({"model": "other", "model_path": bart_folder, "text": SOURCE})  # the explorer
    assert_healthy(at)
    assert "encoder–decoder: this is its encoder's self-attention" in alerts(at, "info")
    assert "matches transformers" in alerts(at, "success")


@pytest.mark.parametrize("mask, label", [
    ("none", "Mask: cross: none · self: built-in causal"),
    ("causal", "Mask: cross: none · self: built-in causal"),
    ("window", "Mask: cross: none · self: built-in causal + window 1")])
def test_the_projectors_mask_button_names_the_decoders_causal_mask_and_where_the_shared_one_applies(mask, label):
    """tiny-bart's decoder self-attention is causal and the shared mask applies to it alone (decoder_mask_spec):
    the top row says so on the first frame and after a rerun, not "Mask: none", and says first that the
    cross-attention grid under it is not masked (not "built-in causal (decoder)" alone)."""
    at = run_app({"present": "1", "mask": mask, "window": "1"}, page=PAGE)
    assert_healthy(at)
    labels = [p.proto.popover.label for p in at.get("popover") if p.proto.popover.label.startswith("Mask: ")]
    assert labels == [label]
    at.run()
    assert [p.proto.popover.label for p in at.get("popover") if p.proto.popover.label.startswith("Mask: ")] == [label]
