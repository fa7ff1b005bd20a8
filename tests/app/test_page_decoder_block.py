"""The decoder block's page in AppTest: attnviz-tiny-bart's decoder layer, stage by stage; its two attentions and the
stage-by-stage chart hold attnviz's recomputation, the layer's output the model's own."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import re

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, page_text, run_app

import attnviz
from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.cross_attention.number_task import DEFAULT_SOURCE
from attnviz.lessons.encoder_layer.decoder_block import STAGE_ROWS, decoder_block_steps

PAGE = "app_pages/decoder_block.py"
BART_SOURCE = "seven hundred eighty five million four hundred twelve thousand three hundred sixty"


@pytest.fixture(scope="module")
def tiny_bart():
    return attnviz.load_model("attnviz-tiny-bart")


def stage_rows(at) -> dict[str, np.ndarray]:
    """The stage-by-stage chart: row name -> the values drawn."""
    trace = chart_specs(at)["dec_stages"]["data"][0]
    z = trace["z"]
    z = decode_plotly_array(z) if isinstance(z, dict) else z
    return {name: np.asarray(row, dtype=np.float64) for name, row in zip(trace["y"], z, strict=True)}


def test_the_decoder_block_shows_tiny_barts_decoder_layer_with_its_numbers(tiny_bart):
    at = run_app({}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    assert at.selectbox(key="dec_layer").value == 1 and at.selectbox(key="dec_head").value == 1
    t = at.selectbox(key="dec_pos").value
    assert t == 1
    res = tiny_bart.run(DEFAULT_SOURCE, target="3 4 1 2")  # the model's own answer, 3412, read by Model.run
    z, rows, cols = drawn_heatmap(at, "dec_self")
    np.testing.assert_allclose(z, res.attentions[1, 1].numpy(), atol=0.0005 + 1e-7)
    assert (np.triu(z, 1) == 0).all()
    z, rows, cols = drawn_heatmap(at, "dec_cross")
    np.testing.assert_allclose(z, res.cross_attentions[1, 1].numpy(), atol=0.0005 + 1e-7)
    assert [r.replace("&lt;", "<").replace("&gt;", ">") for r in rows][:2] == ["</s>→<s>", "<s>→3"]
    steps = decoder_block_steps(tiny_bart, DEFAULT_SOURCE, "3 4 1 2", 1)
    drawn = stage_rows(at)
    assert list(drawn) == list(STAGE_ROWS.values())  # every stage, in the order they run
    np.testing.assert_allclose(drawn[STAGE_ROWS["y_out"]], res.hidden[t, :32].numpy(), atol=1e-5)  # the model's own
    for key, value in (("y", steps.y_in), ("self", steps.self_out), ("y1", steps.y1), ("cross", steps.cross_out),
                       ("y2", steps.y2), ("ffn_hidden", steps.ffn_hidden), ("ffn", steps.ffn_out)):
        np.testing.assert_allclose(drawn[STAGE_ROWS[key]], value[t, :32].numpy(), atol=1e-6)
    y2 = next(el.value for el in at.latex if r"y^{(2)}_{1} = \mathrm{LN}_2" in el.value)
    assert float(re.search(r"\\rVert_2 = (-?[\d.]+)", y2).group(1)) == pytest.approx(float(steps.y2[t].norm()),
                                                                                     abs=1e-4)
    shapes = at.dataframe[-1].value
    assert list(shapes["shape"]) == ["6 × 64", "7 × 64", "4 × 6 × 6", "6 × 64", "4 × 6 × 7", "6 × 64", "6 × 256",
                                     "6 × 64"]
    assert any("matches transformers" in s.value and "decoder layer 1" in s.value for s in at.success)
    assert "3412" in page_text(at)
    assert at.subheader[0].value == "Decoder layer 1, head 1: its two attentions"
    # one plotly chart for the whole layer (it was one per stage): the page draws quickly in a browser
    assert [k for k, spec in chart_specs(at).items() if "heatmap" not in spec] == ["dec_stages"]


def test_the_decoder_block_follows_layer_head_position_source_and_features(tiny_bart):
    at = run_app({"dec_source": BART_SOURCE, "dec_layer": "0", "dec_head": "3"}, page=PAGE)
    at.selectbox(key="dec_pos").set_value(4).run()
    at.slider(key="dec_first").set_value(16).run()
    assert_healthy(at)
    res = tiny_bart.run(BART_SOURCE, target=" ".join("785412360"))
    np.testing.assert_allclose(drawn_heatmap(at, "dec_cross")[0], res.cross_attentions[0, 3].numpy(),
                               atol=0.0005 + 1e-7)
    np.testing.assert_allclose(drawn_heatmap(at, "dec_self")[0], res.attentions[0, 3].numpy(), atol=0.0005 + 1e-7)
    steps = decoder_block_steps(tiny_bart, BART_SOURCE, " ".join("785412360"), 0)
    np.testing.assert_allclose(stage_rows(at)[STAGE_ROWS["y2"]], steps.y2[4, :16].numpy(), atol=1e-6)
    assert any("785412360" in m.value for m in at.markdown)
    assert at.subheader[0].value == "Decoder layer 0, head 3: its two attentions"


@pytest.mark.parametrize("source,message", [("forty two cats", "does not know 'cats'"),
                                            ("", "Type a number in words")])
def test_the_decoder_block_refuses_what_tiny_bart_cannot_read(source, message):
    at = run_app({"dec_source": source}, page=PAGE)
    assert_healthy(at)
    assert any(message in e.value for e in at.error)
    assert "dec_cross" not in chart_specs(at) and at.text_input(key="dec_source").value == source  # nothing lost


def test_the_page_names_its_own_model_and_no_shared_setting():
    at = run_app({"present": "1", "model": "toy"}, page=PAGE)
    assert_healthy(at)
    said = " ".join(m.value for m in at.markdown)
    assert "Shown here for **attnviz-tiny-bart**" in said and "whatever model the other pages use" in said
    assert "sidebar" not in said and "top of the page" not in said
