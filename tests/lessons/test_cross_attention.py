"""The Cross-attention lesson: the two-sentence demonstration on a model without a decoder, the view
the page draws for either kind of model, and the equation with the real shapes."""

import pytest
import torch

import attnviz
from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.lessons.cross_attention.across_sentences import projections_across_sentences
from attnviz.lessons.cross_attention.latex import cross_attention_equation
from attnviz.lessons.cross_attention.views import cross_layers, cross_view

SOURCE = "The cat sat on the mat."
TARGET = "A dog ran after the cat all day long!"


def independent_projection(model, text, layer):
    """The layer-`layer` input of `text` projected per head with the per-head weights [nh, C, hs] and biases."""
    x = model.run(text, keep=True).traces[layer].x_in[0]  # (n, C)
    W = model.per_head_weights(layer)
    b_q, b_k, b_v = model.layers[layer].b_qkv.cpu().view(3, model.n_heads, 1, model.d_head)  # each (nh, 1, hs)
    return (torch.einsum("nc,hcd->hnd", x, W["W_Q"]) + b_q, torch.einsum("nc,hcd->hnd", x, W["W_K"]) + b_k,
            torch.einsum("nc,hcd->hnd", x, W["W_V"]) + b_v)


@pytest.mark.parametrize("layer", [0, 3, 5])
def test_demo_shapes_rows_and_equals_sdpa_on_the_projected_tensors(bundled_model, layer):
    demo = projections_across_sentences(bundled_model, SOURCE, TARGET, layer)
    T, S = len(demo.target_tokens), len(demo.source_tokens)
    assert T != S
    assert demo.weights.shape == (12, T, S)
    assert demo.q.shape == (12, T, 32) and demo.k.shape == demo.v.shape == (12, S, 32)
    assert torch.allclose(demo.weights.sum(-1), torch.ones(12, T), atol=1e-5)
    q, _, _ = independent_projection(bundled_model, TARGET, layer)
    _, k, v = independent_projection(bundled_model, SOURCE, layer)
    assert torch.allclose(demo.q, q, atol=1e-4) and torch.allclose(demo.k, k, atol=1e-4)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert (demo.weights - weights).abs().max() <= 1e-5
    assert (demo.output - out).abs().max() <= 1e-4


def test_demo_with_source_equal_to_target_is_the_models_own_self_attention(bundled_model):
    demo = projections_across_sentences(bundled_model, SOURCE, SOURCE, 2)
    assert (demo.weights - bundled_model.run(SOURCE).attentions[2]).abs().max() <= 1e-5


def test_demo_on_a_pre_ln_decoder_applies_ln1_first(tiny_model_folder):
    gpt2 = attnviz.load_model(str(tiny_model_folder("gpt2")))
    demo = projections_across_sentences(gpt2, SOURCE, SOURCE, 1)
    own = gpt2.run(SOURCE).attentions[1]
    # GPT-2's own attention is causal; the demonstration has no mask. Their last rows agree, since causal
    # leaves that whole row: the last token sees every key in both.
    assert (demo.weights[:, -1] - own[:, -1]).abs().max() <= 1e-5


def test_demo_scale_dial_changes_the_weights(toy):
    scaled = projections_across_sentences(toy, SOURCE, TARGET, 0, scale=True)
    unscaled = projections_across_sentences(toy, SOURCE, TARGET, 0, scale=False)
    assert unscaled.scale == 1.0 and scaled.scale == pytest.approx(toy.d_head ** -0.5)
    out, weights = scaled_dot_product_attention(unscaled.q, unscaled.k, unscaled.v, scale=1.0)
    assert torch.allclose(unscaled.weights, weights) and not torch.allclose(scaled.weights, weights)


@pytest.mark.parametrize("source,target,match", [("", TARGET, "Source"), (SOURCE, "  ", "Target"),
                                                 (SOURCE, "word " * 600, "target is longer")])
def test_demo_bad_input_is_a_clear_error(bundled_model, source, target, match):
    with pytest.raises(attnviz.AttnvizError, match=match):
        projections_across_sentences(bundled_model, source, target, 0)


def test_demo_refuses_a_layer_out_of_range(bundled_model):
    with pytest.raises(attnviz.AttnvizError, match="layers 0..5"):
        cross_view(bundled_model, SOURCE, TARGET, 6)


def test_view_of_an_encoder_is_the_labelled_demonstration(bundled_model):
    assert cross_layers(bundled_model) == (6, 12)
    view = cross_view(bundled_model, SOURCE, TARGET, 1)
    assert not view.real and view.decoder_self is None
    demo = projections_across_sentences(bundled_model, SOURCE, TARGET, 1)
    assert torch.equal(view.weights, demo.weights) and view.target_labels == demo.target_labels


def test_view_of_bart_is_its_real_cross_attention(tiny_model_folder):
    bart = attnviz.load_model(str(tiny_model_folder("bart")))
    assert cross_layers(bart) == (3, 2)
    view = cross_view(bart, SOURCE, TARGET, 2, mask="window:2")
    res = bart.run(SOURCE, target=TARGET, mask="window:2")
    assert view.real and torch.equal(view.weights, res.cross_attentions[2])
    assert torch.equal(view.decoder_self, res.attentions[2]) and view.source_labels == res.source_labels
    with pytest.raises(attnviz.AttnvizError, match="real cross-attention"):
        projections_across_sentences(bart, SOURCE, TARGET, 0)


def test_equation_carries_the_real_shapes():
    tex = cross_attention_equation(n_target=9, n_source=7, d_model=384, d_head=32, scale=32 ** -0.5)
    assert r"(9\times384)(384\times32) = 9\times32" in tex
    assert r"(7\times384)(384\times32) = 7\times32" in tex
    assert r"= 9\times7" in tex and r"\sqrt{32}" in tex


def test_decoder_mask_spec_keeps_what_fits_and_says_why_otherwise(bundled_model, tiny_model_folder):
    from attnviz.lessons.cross_attention.views import decoder_mask_spec

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
    assert decoder_mask_spec(bundled_model, TARGET, "causal")[0] == "none"  # the demonstration has no mask


def test_near_diagonal_share_and_wordpiece_note():
    import torch

    from attnviz.lessons.cross_attention.views import near_diagonal_share, wordpiece_note, words_reversed

    eye = torch.eye(4).unsqueeze(0)  # one head, all weight on the diagonal
    assert near_diagonal_share(eye) == 1.0
    far = torch.zeros(1, 4, 4)
    far[0, :, 3] = 1.0  # every row on the last key: rows 2 and 3 are within one position of it
    assert near_diagonal_share(far) == 0.5
    assert words_reversed("le chat dort") == "dort chat le"
    note = wordpiece_note({"source": ["[CLS]", "the", "[SEP]"], "target": ["le", "tap", "##is", "ass", "##is", "."]})
    assert "tap ##is (= tapis), ass ##is (= assis)" in note
    assert wordpiece_note({"source": ["[CLS]", "the", "cat"]}) is None
