"""The encoder-layer page in AppTest: each stage's bars and numbers are attnviz's recomputation."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import re

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, page_text, run_app

import attnviz
from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.encoder_layer.norms import stream_norms
from attnviz.lessons.encoder_layer.steps import layer_steps

PAGE = "app_pages/encoder_layer.py"
TEXT = "The cat sat on the mat because it was tired."


def bars(at, key: str) -> np.ndarray:
    y = chart_specs(at)[key]["data"][0]["y"]
    return np.asarray(decode_plotly_array(y) if isinstance(y, dict) else y, dtype=np.float64)


def latex_with(at, marker: str) -> str:
    found = [el.value for el in at.latex if marker in el.value]
    assert found, f"no LaTeX containing {marker!r}"
    return found[0]


def norm_written(latex: str) -> float:
    return float(re.search(r"\\rVert_2 = (-?[\d.]+)", latex).group(1))


def test_minilm_post_ln_stages_equal_attnviz_and_the_papers_sizes_are_beside(minilm):
    at = run_app({"text": TEXT, "layer": "3"}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    steps = layer_steps(minilm, minilm.run(TEXT, keep=True), 3)
    i = at.selectbox(key="enc_token").value
    assert i == 2
    for stage in steps.stages:
        np.testing.assert_allclose(bars(at, f"enc_bars_{stage.key}"), stage.value[i, :32].numpy(), atol=1e-6)
    ln = latex_with(at, r"x^{\text{mid}}_{2} = \mathrm{LN}_1")
    assert norm_written(ln) == pytest.approx(float(steps.x_mid[2].norm()), abs=1e-4)
    sizes = at.dataframe[0].value
    assert list(sizes["Transformer base (2017)"]) == [512, 2048, 6, 8, 64]
    assert list(sizes["all-MiniLM-L6-v2"]) == [384, 1536, 6, 12, 32]
    assert "post-LN" in page_text(at)
    assert any("float32 rounding" in c.value for c in at.caption)
    norms = stream_norms(minilm, minilm.run(TEXT, keep=True))
    table = at.dataframe[1].value  # [0]: the sizes; [1]: the stream's norms
    np.testing.assert_allclose(table["‖x‖ entering"], norms.x_in.numpy(), atol=1e-3)
    np.testing.assert_allclose(table["‖FFN's update‖"], norms.ffn_update.numpy(), atol=1e-3)
    lines = chart_specs(at)["enc_norms"]["data"]
    np.testing.assert_allclose(np.asarray(lines[1]["y"], dtype=float), norms.attn_update.numpy(), rtol=1e-5)


def test_toy_token_choice_and_a_token_past_a_shortened_text(toy):
    at = run_app({"model": "toy", "text": TEXT}, page=PAGE)
    at.selectbox(key="enc_token").set_value(9).run()
    assert_healthy(at)
    steps = layer_steps(toy, toy.run(TEXT, keep=True), 0)
    np.testing.assert_allclose(bars(at, "enc_bars_ff1"), steps.stage("ff1").value[9].numpy(), atol=1e-6)  # all 16
    residual = latex_with(at, r"x_{9} + \mathrm{MHA}(x)_{9}")
    assert norm_written(residual) == pytest.approx(float(steps.stage("r1").value[9].norm()), abs=1e-4)
    at.text_area(key="text").set_value("a cat").run()  # [CLS] a cat [SEP]
    assert_healthy(at)
    assert not at.error
    assert any("picked token “was” (9) is not in the new text" in w.value for w in at.info)
    assert at.selectbox(key="enc_token").value == 2
    short = layer_steps(toy, toy.run("a cat", keep=True), 0)
    np.testing.assert_allclose(bars(at, "enc_bars_ln2"), short.x_out[2].numpy(), atol=1e-6)
    at.text_area(key="text").set_value("").run()
    assert_healthy(at)
    assert any("text is empty" in w.value for w in at.warning)


def test_a_gpt2_folder_walks_the_pre_ln_order(tiny_model_folder):
    folder = str(tiny_model_folder("gpt2"))
    at = run_app({"model": "other", "model_path": folder, "text": "The cat sat on the mat."}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    assert "pre-LN" in page_text(at)
    model = attnviz.load_model(folder)
    steps = layer_steps(model, model.run("The cat sat on the mat.", keep=True), 0)
    assert [s.title for s in steps.stages][:3] == ["input x", "LayerNorm first", "multi-head attention"]
    np.testing.assert_allclose(bars(at, "enc_bars_r2"), steps.x_out[2, :32].numpy(), atol=1e-6)
    assert [sub.value.split(". ", 1)[1] for sub in at.subheader][:3] == ["input x", "LayerNorm first",
                                                                         "multi-head attention"]


def test_layer_choice_changes_the_numbers(toy):
    n = 1
    at = run_app({"model": "toy", "text": TEXT, "layer": str(n)}, page=PAGE)
    assert_healthy(at)
    steps = layer_steps(toy, toy.run(TEXT, keep=True), n)
    other = layer_steps(toy, toy.run(TEXT, keep=True), 0)
    np.testing.assert_allclose(bars(at, "enc_bars_attn"), steps.attn[2].numpy(), atol=1e-6)
    assert not np.allclose(bars(at, "enc_bars_attn"), other.attn[2].numpy(), atol=1e-3)


def test_a_llama_folder_walks_the_decoder_block_with_rmsnorm_and_swiglu(tiny_decoder_folder):
    folder, text = str(tiny_decoder_folder("llama")), "the cat sat on the mat"
    at = run_app({"model": "other", "model_path": folder, "text": text, "layer": "1"}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    assert any("(pre-RMSNorm)" in h.value for h in at.header)
    assert "decoder block, not an encoder layer: its attention is causal" in page_text(at)
    model = attnviz.load_model(folder)
    steps = layer_steps(model, model.run(text, keep=True), 1)
    i = at.selectbox(key="enc_token").value
    for stage in steps.stages:
        np.testing.assert_allclose(bars(at, f"enc_bars_{stage.key}"), stage.value[i, :32].numpy(), atol=1e-6)
    assert [sub.value.split(". ", 1)[1] for sub in at.subheader][:3] == ["input x", "RMSNorm first",
                                                                         "causal attention with RoPE"]
    rms = latex_with(at, r"\mathrm{rms}_{2}")
    assert float(re.search(r"= (-?[\d.]+)\s*(\$\$)?\s*$", rms).group(1)) == pytest.approx(float(steps.ln["ln1"][1][2]), rel=1e-3)
    assert any(r"\mathrm{silu}(z) = z\,\sigma(z)" in el.value for el in at.latex)
    assert any("W_Q maps 32 → 64" in c.value for c in at.caption)
    assert any("float32 rounding" in c.value for c in at.caption)


# ---- the decoder block moved to its own page (app_pages/decoder_block.py): an old link says where ------------------


@pytest.mark.parametrize("query, link", [
    ({"dec_source": "forty two", "dec_layer": "0"}, "./decoder_block?dec_source=forty+two&dec_layer=0"),
    ({"fig": "decoder_block"}, "./decoder_block)"),
])
def test_an_old_link_to_the_decoder_block_here_says_where_it_went(query, link):
    at = run_app({"text": TEXT, **query}, page=PAGE)
    assert_healthy(at)
    notes = [i.value for i in at.info if "The decoder block has moved to its own page" in i.value]
    assert len(notes) == 1 and link in notes[0], notes
    assert "enc_bars_ln2" in chart_specs(at) and "dec_stages" not in chart_specs(at)
    at = run_app({"text": TEXT}, page=PAGE)  # a link without them: no note
    assert not [i.value for i in at.info if "has moved" in i.value]
    assert any("[The decoder block](./decoder_block)" in c.value for c in at.caption)
