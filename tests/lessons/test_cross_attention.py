"""The Cross-attention lesson: the view the page draws for an encoder–decoder, what it refuses, and the
equation with the real shapes."""

import pytest
import torch

import attnviz
from attnviz.lessons.cross_attention.latex import cross_attention_equation
from attnviz.lessons.cross_attention.views import cross_layers, cross_view, decoder_mask_spec, wordpiece_note

SOURCE = "The cat sat on the mat."
TARGET = "A dog ran after the cat all day long!"


def test_a_model_without_decoder_and_a_layer_out_of_range_are_refused(bundled_model, tiny_model_folder):
    with pytest.raises(attnviz.AttnvizError, match="has no decoder"):
        cross_view(bundled_model, SOURCE, TARGET, 0)
    bart = attnviz.load_model(str(tiny_model_folder("bart")))
    with pytest.raises(attnviz.AttnvizError, match="decoder layers 0..2, not 3"):
        cross_view(bart, SOURCE, TARGET, 3)


def test_view_of_bart_is_its_real_cross_attention(tiny_model_folder):
    bart = attnviz.load_model(str(tiny_model_folder("bart")))
    assert cross_layers(bart) == (3, 2)
    view = cross_view(bart, SOURCE, TARGET, 2, mask="window:2")
    res = bart.run(SOURCE, target=TARGET, mask="window:2")
    assert torch.equal(view.weights, res.cross_attentions[2])
    assert torch.equal(view.decoder_self, res.attentions[2]) and view.source_labels == res.source_labels


def test_equation_carries_the_real_shapes():
    tex = cross_attention_equation(n_target=9, n_source=7, d_model=384, d_head=32, scale=32 ** -0.5)
    assert r"(9\times384)(384\times32) = 9\times32" in tex
    assert r"(7\times384)(384\times32) = 7\times32" in tex
    assert r"= 9\times7" in tex and r"\sqrt{32}" in tex


def test_decoder_mask_spec_keeps_what_fits_and_says_why_otherwise(tiny_model_folder):
    bart = attnviz.load_model(str(tiny_model_folder("bart")))
    n = len(bart.run(SOURCE, target=TARGET).tokens)
    assert decoder_mask_spec(bart, TARGET, "none") == ("none", None)
    assert decoder_mask_spec(bart, TARGET, "window:2") == ("window:2", None)
    spec, note = decoder_mask_spec(bart, TARGET, "custom:")
    assert note is None and spec.count("/") == n - 1 and spec.startswith("custom:1" + "0" * (n - 1) + "/11")
    assert decoder_mask_spec(bart, TARGET, "padding:2")[0] == "none" and "Padding" in decoder_mask_spec(
        bart, TARGET, "padding:2")[1]
    spec, note = decoder_mask_spec(bart, TARGET, "custom:10/01")  # 2 rows for a longer target
    assert spec == "none" and note.startswith("Mask:")


def test_wordpiece_note():
    note = wordpiece_note({"source": ["[CLS]", "the", "[SEP]"], "target": ["le", "tap", "##is", "ass", "##is", "."]})
    assert "tap ##is (= tapis), ass ##is (= assis)" in note
    assert wordpiece_note({"source": ["[CLS]", "the", "cat"]}) is None
