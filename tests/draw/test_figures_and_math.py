"""Unit tests of the explorer's builders: figures, LaTeX, plain sentences, exports, the truth check."""

import csv
import io
import math
import re

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import attnviz
from attnviz.draw.describe import describe_effect, describe_input_embedding, describe_mask, describe_scale, head_facts
from attnviz.draw.export import attentions_npz, head_csv
from attnviz.draw.heatmap_payload import decode_payload, heatmap_payload
from attnviz.draw.latex import attention_equation, fmt, mask_matrix, multi_head_equation, shown_positions
from attnviz.draw.plotting import distinct_labels, plain_text, projector_figure, visible_text
from attnviz.engine.masks import causal_mask, key_padding_mask
from attnviz.engine.truth import check_against_transformers


@pytest.fixture(scope="module")
def toy_result():
    return attnviz.load_model("toy").run("the cat sat on the mat")


# ---- plotting ---------------------------------------------------------------------------------


def test_repeated_tokens_get_distinct_axis_categories_that_read_the_same():
    labels = distinct_labels(["the", "cat", "the", "the"])
    assert len(set(labels)) == 4
    assert [visible_text(s) for s in labels] == ["the", "cat", "the", "the"]
    many = distinct_labels(["the"] * 512)
    assert len(set(many)) == 512 and max(len(s) for s in many) <= len("the") + 5  # grows like log4(n)


def test_html_in_tokens_is_escaped_for_plotly():
    assert plain_text("<img src=x>") == "&lt;img src=x&gt;"
    assert plain_text("a&b") == "a&amp;b"


# ---- LaTeX and sentences ----------------------------------------------------------------------


def test_equation_fills_in_d_k_and_the_factor():
    assert r"\sqrt{32}" in attention_equation(1 / math.sqrt(32), 32, masked=False)
    assert "+ M" in attention_equation(1 / math.sqrt(32), 32, masked=True)
    assert "no scaling" in attention_equation(1.0, 32, masked=False)
    assert r"QK^\top \cdot 0.25" in attention_equation(0.25, 32, masked=False)


def test_mask_matrix_draws_minus_infinity_where_forbidden_and_a_corner_when_large():
    small = mask_matrix(causal_mask(3), 3)
    assert small.count(r"-\infty") == 3 and r"\cdots" not in small
    big = mask_matrix(causal_mask(20), 20)
    assert r"\cdots" in big and r"\ddots" in big
    assert r"\scriptstyle 19" in big  # the last row and column are labelled and drawn


def test_mask_matrix_shows_the_pad_columns_of_a_padding_mask():
    """A padding mask forbids only the last columns: a top-left corner would read as 'nothing masked'."""
    n = 12
    tex = mask_matrix(key_padding_mask(n, 3), n)
    assert shown_positions(n) == [0, 1, 2, None, 10, 11]
    rows = tex.split(r"\hline")[1].split(r"\\")
    first = [c.strip() for c in rows[0].split("&")]
    assert first[1:] == ["0", "0", "0", r"\cdots", r"-\infty", r"-\infty"]  # keys 10, 11 are [PAD]
    assert tex.count(r"-\infty") == 2 * 5  # 5 drawn rows × the 2 drawn [PAD] columns


def test_equations_break_into_short_lines_that_fit_a_narrow_column():
    for tex in (attention_equation(1 / math.sqrt(32), 32, masked=True), attention_equation(4.0, 32, masked=True),
                multi_head_equation(12, 384)):
        for line in tex.split(r"\\"):
            visible = re.sub(r"\\[a-zA-Z]+|[{}_^ ]", "", line)  # the characters KaTeX draws, roughly
            assert len(visible) <= 30, line


def test_fmt_writes_infinity_and_scientific_numbers():
    assert fmt(float("-inf")) == r"-\infty"
    assert fmt(0.5) == "0.5" and "10^{-5}" in fmt(1.5e-5)


def test_multi_head_equation_states_d_model_as_heads_times_d_head():
    assert r"12\cdot32 = 384" in multi_head_equation(12, 384)
    assert multi_head_equation(12, 384).count("b_O") == 2  # the output projection's bias, in both forms


def test_sentences_read_the_settings_aloud():
    assert "before it" in describe_mask("causal")
    assert "2 positions away" in describe_mask("window:2")
    assert "decoder" in describe_mask("none", causal_model=True)


def test_a_causal_model_with_no_mask_is_never_said_to_look_both_ways():
    text = describe_mask("none", causal_model=True)
    assert "before and after" not in text and "never the ones after" in text
    assert "before and after" in describe_mask("none", causal_model=False)
    assert "never sees the ones after" in describe_mask("window:2", causal_model=True)
    assert "Bernoulli" in describe_mask("random:0.3:0") and "no local window" in describe_mask("strided:3")


def test_input_embedding_is_named_per_family():
    assert describe_input_embedding("learned", True, True) == "LayerNorm(token + position + segment embeddings)"  # BERT
    assert describe_input_embedding("learned", False, False) == "token + position embeddings"  # GPT-2
    assert describe_input_embedding("sinusoidal") == "token embeddings + sinusoidal position encodings"  # the toy
    assert describe_input_embedding("none") == "token embeddings alone (this model has no positions)"  # toy-nopos
    assert describe_input_embedding("rope") == "token embeddings (positions enter later, inside attention)"  # Llama
    assert "√32" in describe_scale(1 / math.sqrt(32), 32)
    assert "off" in describe_scale(1.0, 32)
    assert describe_effect("none", 1 / math.sqrt(32), 32) is None
    assert "every layer" in describe_effect("causal", 1 / math.sqrt(32), 32)


# ---- exports and truth ------------------------------------------------------------------------


def test_head_csv_has_token_headers_and_the_weights(toy_result):
    rows = list(csv.reader(io.StringIO(head_csv(toy_result, 1, 0))))
    n = len(toy_result.tokens)
    assert len(rows) == n + 1 and rows[0][1] == "0:[CLS]" and rows[1][0] == "0:[CLS]"
    first = [float(x) for x in rows[1][1:]]
    np.testing.assert_allclose(first, toy_result.attentions[1, 0, 0].numpy(), atol=1e-6)


def test_npz_holds_all_layers_heads_tokens_and_settings(toy_result):
    data = np.load(io.BytesIO(attentions_npz(toy_result, {"mask": "none"})))
    np.testing.assert_array_equal(data["attentions"], toy_result.attentions.numpy())
    assert list(data["tokens"]) == toy_result.tokens and str(data["setting_mask"]) == "none"


def test_truth_check_matches_transformers_for_the_bundled_model():
    check = check_against_transformers(attnviz.load_model(), "Trust, but verify.")
    assert check.matches and check.max_abs_diff < 1e-5
    model = attnviz.load_model()  # the explorer's own run ("none" mask), handed in: the same comparison
    given = check_against_transformers(model, "Trust, but verify.", ours=model.run("Trust, but verify.", mask="none"))
    assert given.max_abs_diff == check.max_abs_diff


def test_truth_check_explains_that_the_toy_model_has_no_reference():
    check = check_against_transformers(attnviz.load_model("toy"), "hello")
    assert check.max_abs_diff is None and "seeded" in check.reason and not check.matches


def test_fully_masked_rows_never_reach_the_screen_as_nan():
    w = attnviz.load_model("toy").run("a b c", mask=torch.zeros(5, 5, dtype=torch.bool)).attentions
    assert torch.all(w == 0)
    for thumbs in (False, True):  # a layer's grid (the explorer) and the thumbnails (the model view)
        payload = heatmap_payload(w[0], ["x"] * 5, titles=[f"head {h}" for h in range(w.shape[1])], thumbnails=thumbs)
        assert np.array_equal(decode_payload(payload)[1], np.zeros((w.shape[1], 5, 5)))


def test_head_facts_and_equation_are_truthful_when_the_config_sets_d_head():
    assert head_facts(384, 12, 32) == "d_model = n_heads·d_head = 12·32 = 384"
    assert head_facts(32, 4, 16, 2) == ("d_model 32 · 4 heads × d_head 16 (Q projects to 64) · "
                                        "2 K/V heads shared by the 4 query heads")
    assert "1 K/V head shared" in head_facts(32, 4, 8, 1)
    assert r"12\cdot32 = 384" in multi_head_equation(12, 384, 32)
    eq = multi_head_equation(4, 32, 16)
    assert r"W_O: n_{heads} \cdot d_{head} = 4\cdot16 = 64" in eq and r"\to d_{model} = 32" in eq and "4\\cdot8" not in eq


def test_a_models_builtin_sliding_window_is_said():
    sentence = describe_mask("none", causal_model=True, builtin_window=5)
    assert "sliding window of 5 keys" in sentence and "at most the 4 tokens before it" in sentence
    assert "sliding window" not in describe_mask("none", causal_model=True)


def test_on_a_projector_a_figure_of_pictures_gets_no_room_for_ticks_it_does_not_have():
    """The larger type's added height is for ticks and axis titles: five pictures (every axis hidden) had 100 px more,
    a blank band under them on the projector; a chart with axes still gets it."""
    pictures = go.Figure(go.Image(z=np.zeros((3, 4, 3)))).update_layout(height=250)
    pictures.update_xaxes(visible=False).update_yaxes(visible=False)
    chart = go.Figure(go.Scatter(x=[0, 1], y=[1, 0])).update_layout(height=250)
    assert projector_figure(pictures)["layout"]["height"] == 250
    assert projector_figure(chart)["layout"]["height"] > 250
