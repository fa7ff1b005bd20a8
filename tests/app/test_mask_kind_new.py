"""A new mask kind is one entry in the registry (engine/mask_kinds.py): defined here, in the test, and registered, it
is parsed, counted, offered by the sidebar's picker, run by a model, and drawn by the Masks lab's gallery and cost
chart with no other change."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
import torch
from apptest_helpers import assert_healthy, drawn_heatmap, has_heatmap, page_text, run_app

import attnviz
from attnviz import AttnvizError
from attnviz.draw.describe import describe_mask, mask_button_name
from attnviz.draw.line_chart import chart_lines
from attnviz.engine.mask_kinds import MASKS, MaskKind, MaskParameter, mask_kind, parse_mask, register_mask_kind
from attnviz.lessons.compare.sides import describe_mask_setting
from attnviz.lessons.masks.gallery import attended_pairs, attended_pairs_curves, attended_pairs_formula, gallery_specs
from ui import across_pages  # imported before a kind is registered, as in a server that registers one later

PAGE = "app_pages/masks.py"
TEXT = "the cat sat on the mat"
ATOL = 0.5 / 65534 + 1e-7  # weights of 8 tokens travel as uint16: to half a step of 1/65534


def sink_mask(n: int, values: dict) -> torch.Tensor:
    """(n, n) bool: each query sees itself and the first `sinks` tokens (attention sinks)."""
    j = torch.arange(n).view(1, n)  # key positions (1, n)
    return (j < values["sinks"]) | torch.eye(n, dtype=torch.bool)


def sink_pairs(n: int, values: dict) -> float:
    s = min(values["sinks"], n)
    return float(n * s + (n - s))  # the s sink columns in every row, + the diagonal outside them


SINK = MaskKind("sink", "attention sinks (first tokens + itself)", "attention sinks",
                "Each query sees itself and the first S tokens.",
                (MaskParameter("sinks", "Sink tokens", 2, 1, 8, 1),),
                sentence="attention sinks: each token sees itself and the first {arg} tokens",
                build=sink_mask, pairs=sink_pairs)


@pytest.fixture
def sink():
    register_mask_kind(SINK)
    try:
        yield SINK
    finally:
        del MASKS[SINK.name]


def test_a_kind_and_its_parameters_are_registered_once(sink):
    with pytest.raises(ValueError, match="already registered"):
        register_mask_kind(sink)
    with pytest.raises(ValueError, match=r"\['window'\]"):
        register_mask_kind(MaskKind("wide", "wide", "wide", "", (MaskParameter("window", "w", 1),)))


def test_the_parser_and_the_gallery_read_a_registered_kind(sink):
    assert torch.equal(parse_mask("sink:1", 4), torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]]).bool())
    assert torch.equal(parse_mask("causal&sink", 5), torch.tril(torch.ones(5, 5)).bool() & sink_mask(5, {"sinks": 2}))
    with pytest.raises(AttnvizError, match=r"Unknown mask 'nope'.*sink"):
        mask_kind("nope")
    assert gallery_specs()["sink"] == "sink:2"  # its example: the defaults
    for n in (1, 2, 3, 9, 40):
        assert attended_pairs_formula("sink", n) == attended_pairs(parse_mask("sink:2", n), n)
    assert "sink" in attended_pairs_curves([8, 16])


def test_a_model_runs_with_a_registered_kind(sink):
    res = attnviz.load_model("toy").run(TEXT, mask="sink:1")
    allowed = sink_mask(len(res.tokens), {"sinks": 1})
    assert float(res.attentions[..., ~allowed].abs().max()) == 0.0


def test_the_masks_lab_and_the_picker_offer_and_draw_a_registered_kind(sink):
    at = run_app({"model": "toy", "text": TEXT}, page=PAGE)
    assert_healthy(at)
    assert "sink" in at.sidebar.selectbox(key="mask").options
    assert has_heatmap(at, "masks_gallery_sink_weights")
    text = page_text(at)
    assert "**attention sinks** · `sink:2` · **" in text
    assert "Attention sinks: each token sees itself and the first 2 tokens" in text
    res = attnviz.load_model("toy").run(TEXT, mask="sink:2")
    m = drawn_heatmap(at, "masks_gallery_sink_mask")[0]
    np.testing.assert_array_equal((m == 0).astype(int), res.mask.numpy())
    np.testing.assert_allclose(drawn_heatmap(at, "masks_gallery_sink_weights")[0], res.attentions[0, 0].numpy(), atol=ATOL)
    (chart,) = [md.value for md in at.markdown if 'class="av-line"' in md.value]
    assert "attention sinks" in chart_lines(chart)


def test_a_registered_kinds_parameter_is_carried_to_the_next_page(sink):
    """The sidebar's settings go with the class from page to page (ui/across_pages.py: a new page's address has none
    of the old one's); a kind registered after the app's modules were imported carries its parameter too."""
    assert "sinks" in across_pages.shared_keys()
    at = run_app({"model": "toy", "text": TEXT, "mask": "sink"}, page=PAGE)
    at.sidebar.slider(key="sinks").set_value(5).run()
    assert_healthy(at)
    assert at.session_state[across_pages.MEMORY]["values"]["sinks"] == 5  # what a new page's first run puts back
    for key in list(at.query_params):  # the menu's link to another page carries no parameters
        del at.query_params[key]
    at.switch_page("app_pages/explorer.py").run()
    assert_healthy(at)
    assert (at.sidebar.selectbox(key="mask").value, at.sidebar.slider(key="sinks").value) == ("sink", 5)


def test_the_mask_button_compare_and_the_sentences_word_a_registered_kind(sink):
    """Each place that names a mask reads the kind's words from the registry (no list of names of its own)."""


    assert mask_button_name("sink:3") == "sink 3"
    assert mask_button_name("sink:3", causal_model=True) == "built-in causal + sink 3"
    assert describe_mask_setting("sink:3") == "the sink mask (3)"
    assert describe_mask_setting("causal&sink:3") == "the causal mask and the sink mask (3)"
    assert describe_mask("sink:3", causal_model=True).startswith(
        "Attention sinks: each token sees itself and the first 3 tokens. This model is a decoder")
