"""The Cross-attention page in AppTest: what it draws equals attnviz's numbers, for the bundled encoder's
labelled demonstration and for a tiny random BART given as the sidebar's "other" model."""

import html
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

import attnviz
from attnviz.engine.masks import causal_mask, window_mask
from attnviz.lessons.cross_attention.across_sentences import projections_across_sentences

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


# ---- the bundled encoder: the labelled demonstration ---------------------------------------------


def test_demonstration_draws_every_head_as_attnviz_computes(minilm):
    at = run_app({"xa_source": SOURCE, "xa_target": TARGET}, page=PAGE)
    assert_healthy(at)
    demo = projections_across_sentences(minilm, SOURCE, TARGET, 0)
    for h in range(12):
        z, rows, cols = drawn_heatmap(at, f"xa_grid_{h}")
        assert z.shape == (len(demo.target_tokens), len(demo.source_tokens))
        np.testing.assert_allclose(z, demo.weights[h].numpy(), atol=DRAWN)
        assert rows == demo.target_labels and cols == demo.source_labels
    text = page_text(at)
    assert "projections applied across two sentences" in text
    T, S = len(demo.target_tokens), len(demo.source_tokens)
    assert T != S
    assert rf"({T}\times384)(384\times32) = {T}\times32" in text  # Q from the target tokens
    assert rf"({S}\times384)(384\times32) = {S}\times32" in text  # K from the source tokens
    assert "matches transformers" not in text and "real ones" in alerts(at, "success")
    assert "xa_self" not in chart_specs(at)  # no decoder self-attention to contrast with


def test_demonstration_follows_layer_and_head_choice(minilm):
    at = run_app({"xa_source": SOURCE, "xa_target": TARGET}, page=PAGE)
    at.selectbox(key="xa_layer").set_value(4)
    at.multiselect(key="xa_heads").set_value([3, 7])
    at.run()
    assert_healthy(at)
    demo = projections_across_sentences(minilm, SOURCE, TARGET, 4)
    assert set(k for k in chart_specs(at) if k.startswith("xa_grid")) == {"xa_grid_0", "xa_grid_1"}
    for i, h in enumerate([3, 7]):
        np.testing.assert_allclose(drawn_heatmap(at, f"xa_grid_{i}")[0], demo.weights[h].numpy(), atol=DRAWN)
    assert not np.allclose(drawn_heatmap(at, "xa_grid_0")[0], demo.weights[0].numpy(), atol=0.01)


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
def test_empty_source_or_target_asks_for_it(which):
    at = run_app({"xa_source": SOURCE, "xa_target": TARGET, which: "  "}, page=PAGE)
    assert_healthy(at)
    assert ("source" if which == "xa_source" else "target") in alerts(at, "warning")
    assert not [k for k in chart_specs(at) if k.startswith("xa_")]


def test_invisible_target_is_a_clear_error():
    at = run_app({"xa_source": SOURCE, "xa_target": "\u200b\u200b"}, page=PAGE)
    assert_healthy(at)
    assert "Target:" in alerts(at, "error") and "invisible" in alerts(at, "error")


def test_target_too_long_for_bart_is_a_clear_error(bart_folder):
    at = run_app(bart_query(bart_folder, xa_target="the cat " * 80), page=PAGE)
    assert_healthy(at)
    assert "target is longer" in alerts(at, "error")


def test_missing_model_folder_falls_back_to_the_demonstration():
    at = run_app({"model": "other", "model_path": "/no/such/folder", "xa_source": SOURCE, "xa_target": TARGET},
                 page=PAGE)
    assert_healthy(at)
    assert "No folder" in alerts(at, "error")
    assert "projections applied across two sentences" in page_text(at)
    assert drawn_heatmap(at, "xa_grid_0")[0].shape[1] == 9


def test_other_pages_run_a_bart_as_its_encoder_and_say_so(bart, bart_folder):
    at = run_app({"model": "other", "model_path": bart_folder, "text": SOURCE})  # the explorer
    assert_healthy(at)
    assert "encoder–decoder: this is its encoder's self-attention" in alerts(at, "info")
    assert "matches transformers" in alerts(at, "success")


def test_the_demonstration_warns_that_its_diagonal_is_position_and_explains_word_pieces(minilm):
    from attnviz.lessons.cross_attention.views import cross_view, near_diagonal_share, words_reversed

    target = "Le chat était assis sur le tapis."
    at = run_app({"xa_source": SOURCE, "xa_target": target}, page=PAGE)
    assert_healthy(at)
    here = near_diagonal_share(cross_view(minilm, SOURCE, target, 0).weights)
    flipped = near_diagonal_share(cross_view(minilm, SOURCE, words_reversed(target), 0).weights)
    assert abs(here - flipped) < 0.05  # the reason for the warning: the diagonal stays when the words move
    warnings = alerts(at, "warning")
    assert "A diagonal here is position, not alignment." in warnings
    assert f"{here:.0%} of the weight" in warnings and f"in reverse order it is {flipped:.0%}" in warnings
    assert "It hardly moves when the words move: the diagonal follows the positions" in warnings
    info = alerts(at, "info")
    assert "ass ##is (= assis)" in info and "“##” marks a piece that continues the word before it" in info


def test_the_real_cross_attention_gets_no_position_warning(bart_folder):
    at = run_app(bart_query(bart_folder), page=PAGE)
    assert "A diagonal here is position" not in alerts(at, "warning")
