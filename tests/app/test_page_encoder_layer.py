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
    table = at.dataframe[1].value  # [0]: the sizes; [1]: the stream's norms; then the decoder block's shapes
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


# ---- the decoder block: attnviz-tiny-bart, one decoder layer stage by stage ------------------------------

BART_SOURCE = "seven hundred eighty five million four hundred twelve thousand three hundred sixty"


@pytest.fixture(scope="module")
def tiny_bart():
    return attnviz.load_model("attnviz-tiny-bart")


def drawn(at, key: str):
    from apptest_helpers import drawn_heatmap

    return drawn_heatmap(at, key)


def test_the_decoder_block_shows_tiny_barts_decoder_layer_with_its_numbers(tiny_bart):
    from attnviz.lessons.cross_attention.number_task import DEFAULT_SOURCE
    from attnviz.lessons.encoder_layer.decoder_block import decoder_block_steps

    at = run_app({"text": TEXT}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    assert at.selectbox(key="dec_layer").value == 1 and at.selectbox(key="dec_head").value == 1
    t = at.selectbox(key="dec_pos").value
    assert t == 1
    res = tiny_bart.run(DEFAULT_SOURCE, target="3 4 1 2")  # the model's own answer, 3412, read by Model.run
    z, rows, cols = drawn(at, "dec_self")
    np.testing.assert_allclose(z, res.attentions[1, 1].numpy(), atol=0.0005 + 1e-7)
    assert (np.triu(z, 1) == 0).all()
    z, rows, cols = drawn(at, "dec_cross")
    np.testing.assert_allclose(z, res.cross_attentions[1, 1].numpy(), atol=0.0005 + 1e-7)
    assert [r.replace("&lt;", "<").replace("&gt;", ">") for r in rows][:2] == ["</s>→<s>", "<s>→3"]
    steps = decoder_block_steps(tiny_bart, DEFAULT_SOURCE, "3 4 1 2", 1)
    np.testing.assert_allclose(bars(at, "dec_bars_y_out"), res.hidden[t, :32].numpy(), atol=1e-5)  # the model's own
    for key, value in (("y", steps.y_in), ("self", steps.self_out), ("y1", steps.y1), ("cross", steps.cross_out),
                       ("y2", steps.y2), ("ffn_hidden", steps.ffn_hidden), ("ffn", steps.ffn_out)):
        np.testing.assert_allclose(bars(at, f"dec_bars_{key}"), value[t, :32].numpy(), atol=1e-6)
    y2 = latex_with(at, r"y^{(2)}_{1} = \mathrm{LN}_2")
    assert norm_written(y2) == pytest.approx(float(steps.y2[t].norm()), abs=1e-4)
    shapes = at.dataframe[-1].value
    assert list(shapes["shape"]) == ["6 × 64", "7 × 64", "4 × 6 × 6", "6 × 64", "4 × 6 × 7", "6 × 64", "6 × 256",
                                     "6 × 64"]
    assert any("matches transformers" in s.value and "decoder layer 1" in s.value for s in at.success)
    assert "3412" in page_text(at)


def test_the_decoder_block_follows_layer_head_position_and_source(tiny_bart):
    at = run_app({"text": TEXT, "dec_source": BART_SOURCE, "dec_layer": "0", "dec_head": "3"}, page=PAGE)
    at.selectbox(key="dec_pos").set_value(4).run()
    assert_healthy(at)
    res = tiny_bart.run(BART_SOURCE, target=" ".join("785412360"))
    np.testing.assert_allclose(drawn(at, "dec_cross")[0], res.cross_attentions[0, 3].numpy(), atol=0.0005 + 1e-7)
    np.testing.assert_allclose(drawn(at, "dec_self")[0], res.attentions[0, 3].numpy(), atol=0.0005 + 1e-7)
    from attnviz.lessons.encoder_layer.decoder_block import decoder_block_steps

    steps = decoder_block_steps(tiny_bart, BART_SOURCE, " ".join("785412360"), 0)
    np.testing.assert_allclose(bars(at, "dec_bars_y2"), steps.y2[4, :32].numpy(), atol=1e-6)
    assert any("785412360" in m.value for m in at.markdown)


@pytest.mark.parametrize("source,message", [("forty two cats", "does not know 'cats'"),
                                            ("", "Type a number in words")])
def test_the_decoder_block_refuses_what_tiny_bart_cannot_read_and_the_encoder_part_stays(source, message):
    at = run_app({"text": TEXT, "dec_source": source}, page=PAGE)
    assert_healthy(at)
    assert any(message in e.value for e in at.error)
    assert "enc_bars_ln2" in chart_specs(at) and "dec_cross" not in chart_specs(at)
