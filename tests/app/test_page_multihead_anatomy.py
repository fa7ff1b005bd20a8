"""The multi-head anatomy page in AppTest: the numbers it draws and writes are attnviz's."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import re

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_heatmap, page_text, run_app

import attnviz
from attnviz.lessons.multihead.grouping import grouped_patterns, kv_cache_bytes
from attnviz.lessons.multihead.heads import head_split
from attnviz.lessons.multihead.projection import output_projection

PAGE = "app_pages/multihead.py"
TEXT = "The cat sat on the mat because it was tired."


def latex_with(at, marker: str) -> str:
    found = [el.value for el in at.latex if marker in el.value]
    assert found, f"no LaTeX containing {marker!r}"
    return found[0]


def last_number(latex: str) -> float:
    mantissa, exponent = re.findall(r"(-?\d+(?:\.\d+)?)(?:\\times10\^\{(-?\d+)\})?", latex)[-1]
    return float(mantissa) * 10 ** int(exponent or 0)


@pytest.fixture(scope="module")
def minilm_page():
    return run_app({"text": TEXT, "layer": "2"}, page=PAGE)


def test_minilm_page_draws_attnviz_numbers_with_the_real_shapes(minilm_page, minilm):
    at = minilm_page
    assert_healthy(at)
    assert not at.error
    res = minilm.run(TEXT, keep=True)
    split = head_split(res, 2)
    q, rows, _ = drawn_heatmap(at, "mha_q")
    np.testing.assert_allclose(q, split.q.numpy(), atol=1e-6)
    assert rows[0] == "[CLS]" and len(rows) == len(res.tokens)
    for h in (0, 7, 11):
        z, _, _ = drawn_heatmap(at, f"mha_slice_{h}")
        np.testing.assert_allclose(z, split.q[:, 32 * h:32 * (h + 1)].numpy(), atol=1e-6)
    text = page_text(at)
    assert "384 = 12 \\cdot 32" in text and "512 = 8 \\cdot 64" in text
    n = len(res.tokens)
    assert f"(12,\\ {n},\\ 32)" in latex_with(at, "xrightarrow")  # (h, n, d_head)
    assert last_number(latex_with(at, "merge}(\\mathrm{split}")) == 0.0
    proj = output_projection(minilm, res, 2)
    gap = last_number(latex_with(at, r"\max_{i,c}"))
    assert gap == pytest.approx(proj.gap, abs=1e-8) and gap < 1e-5
    norms, heads, tokens = drawn_heatmap(at, "mha_contrib")
    np.testing.assert_allclose(norms, proj.contribution_norms.numpy(), rtol=1e-5)
    assert heads == [f"head {h}" for h in range(12)] and tokens == rows


def test_kv_cache_formula_and_table_for_the_loaded_model(minilm_page):
    at = minilm_page
    expected = kv_cache_bytes(6, 12, 32, 2, 4096)  # defaults: 4096 tokens, 2 bytes per value
    formula = latex_with(at, r"\text{KV cache}")
    assert r"2 \cdot 6 \cdot 12 \cdot 32 \cdot 2 \cdot 4096" in formula
    assert formula.replace(r"\,", "").count(str(expected)) == 1
    table = at.dataframe[0].value
    assert list(table["K/V heads"]) == [12, 6, 4, 3, 2, 1]
    assert list(table["variant"]) == ["MHA", "GQA", "GQA", "GQA", "GQA", "MQA"]
    at.selectbox(key="mha_geo").set_value("Llama-2-70B").run()
    assert r"2 \cdot 80 \cdot 8 \cdot 128 \cdot 2 \cdot 4096" in latex_with(at, r"\text{KV cache}")


def test_grouped_patterns_on_screen_and_a_group_count_that_does_not_divide(minilm):
    at = run_app({"text": TEXT, "layer": "1"}, page=PAGE)
    at.number_input(key="mha_groups").set_value(4).run()
    at.selectbox(key="mha_head").set_value(5).run()
    assert_healthy(at)
    gp = grouped_patterns(minilm, minilm.run(TEXT, keep=True), 1, 4)
    drawn, _, _ = drawn_heatmap(at, "mha_grouped")
    np.testing.assert_allclose(drawn, gp.grouped[5].numpy(), atol=0.0005 + 1e-7)
    original, _, _ = drawn_heatmap(at, "mha_orig")
    np.testing.assert_allclose(original, gp.original[5].numpy(), atol=0.0005 + 1e-7)
    table = at.dataframe[-1].value
    np.testing.assert_allclose(table["mean row total variation"], gp.total_variation.numpy(), atol=1e-4)
    assert list(table["K/V group"]) == gp.group_of_head
    assert any("approximation of a model that was not trained this way" in w.value for w in at.warning)
    at.number_input(key="mha_groups").set_value(5).run()
    assert_healthy(at)
    assert any("5 groups do not divide the 12 heads" in e.value for e in at.error)
    assert drawn_heatmap(at, "mha_q")  # the rest of the page is still there


def test_toy_with_one_group_is_mqa_and_empty_text_is_a_message(toy):
    at = run_app({"model": "toy", "text": "The cat sat on the mat."}, page=PAGE)
    assert_healthy(at)
    gp = grouped_patterns(toy, toy.run("The cat sat on the mat.", keep=True), 0, 1)
    drawn, _, _ = drawn_heatmap(at, "mha_grouped")
    np.testing.assert_allclose(drawn, gp.grouped[0].numpy(), atol=0.0005 + 1e-7)
    at.number_input(key="mha_groups").set_value(2).run()
    delta, _, _ = drawn_heatmap(at, "mha_delta")
    assert np.abs(delta).max() == 0.0  # two groups of one head each: nothing changes
    at.text_area(key="text").set_value("   ").run()
    assert_healthy(at)
    assert any("text is empty" in w.value for w in at.warning)


def test_a_llama_folder_shows_its_real_gqa_and_a_truthful_head_width(tiny_decoder_folder):
    folder, text = str(tiny_decoder_folder("llama")), "the cat sat on the mat"
    at = run_app({"model": "other", "model_path": folder, "text": text, "layer": "1"}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    model = attnviz.load_model(folder)
    res = model.run(text, keep=True)
    split = head_split(res, 1)
    q, _, _ = drawn_heatmap(at, "mha_q")
    np.testing.assert_allclose(q, split.q.numpy(), atol=1e-6)
    assert q.shape == (len(res.tokens), 64)
    text_on_page = page_text(at)
    assert r"4 \cdot 16 = 64 \neq d_{model} = 32" in text_on_page
    assert "W_Q maps d_model = 32 to 4 · 16 = 64 columns" in text_on_page and "W_O (64 × 32)" in text_on_page
    proj = output_projection(model, res, 1)
    assert last_number(latex_with(at, r"\max_{i,c}")) == pytest.approx(proj.gap, abs=1e-8) and proj.gap < 1e-5
    sharing = next(d.value for d in at.dataframe if "found in this run" in d.value.columns)
    assert list(sharing["query heads that read it"]) == ["0, 1", "2, 3"]
    assert list(sharing["found in this run"]) == ["0, 1", "2, 3"]
    assert "really shares K/V heads: 4 query heads, 2 K/V heads" in text_on_page
    assert any("Query head h reads K/V head h // 2" in c.value for c in at.caption)


def test_an_encoder_is_said_to_keep_no_kv_cache_and_its_figure_is_a_decoder_of_its_shape(minilm_page):
    at = minilm_page
    at.selectbox(key="mha_geo").set_value("all-MiniLM-L6-v2 (loaded)").run()  # another test may have picked another
    notes = " ".join(str(i.value) for i in at.info)
    assert "all-MiniLM-L6-v2 is an encoder: it reads the whole text at once and generates nothing, so it keeps no KV " \
           "cache (0 bytes)" in notes
    assert r"\text{KV cache}_{\text{a decoder of this shape}}" in latex_with(at, r"\text{KV cache}")


def test_the_count_of_kv_groups_is_G_and_g_stays_the_formulas_group_index(minilm_page):
    at = minilm_page
    assert at.number_input(key="mha_groups").label.startswith("K/V groups G (1 = MQA")
    formula = latex_with(at, r"W_K^{[g]}")
    assert r"g = 0, \dots, G - 1 = 2" in formula  # 12 heads, G = 3 groups by default
    assert "K/V groups g" not in page_text(at)
