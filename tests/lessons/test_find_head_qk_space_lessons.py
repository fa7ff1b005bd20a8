"""The two pages' words and clicks: sentences that must stay true at their edges, and a click's state read safely."""

import pytest
import torch

import attnviz
from attnviz.analysis.head_search import HeadWeight
from attnviz.analysis.qk_space import head_queries_and_keys, nearest_key_agreement
from attnviz.lessons.find_head import column_heads_sentence, default_pair, explorer_params, median_weight, summary_sentence
from attnviz.lessons.qk_space import MAX_LINES, agreement_sentence, clicked_token, lines_sentence, plane_of

LABELS = ["[CLS]", "the", "animal", "it", "[SEP]"]


def test_the_summary_says_the_best_head_and_the_even_spread():
    ranked = [HeadWeight(1, 3, 1, 0.6), HeadWeight(2, 0, 0, 0.2), HeadWeight(3, 1, 0, 0.1), HeadWeight(4, 2, 2, 0.0)]
    text = summary_sentence(ranked, 3, 2, LABELS, 5)
    assert text.startswith("**Layer 3, head 1** gives the most: **0.60** of query it \\(3\\)'s attention goes to key "
                           "animal \\(2\\), 3.0× an even spread over the 5 keys it may see (1/5 = 0.200).")
    assert "1 of the 4 heads gives it half or more; the median head gives 0.150." in text
    assert median_weight(ranked[:3]) == 0.2
    assert "sees no key at all" not in text
    assert "The mask lets query it \\(3\\) see no key at all" in summary_sentence(ranked, 3, 2, LABELS, 0)


def test_the_explorer_link_names_layer_head_and_pair():
    assert explorer_params(HeadWeight(1, 3, 1, 0.6), 3, 2, LABELS) == {
        "layer": "3", "heads": "1", "sbs_head": "1", "sbs_query": "3: it", "sbs_key": "2: animal"}


@pytest.mark.parametrize("state,expected", [
    ({"selection": {"points": [{"curve_number": 0, "point_index": 3}]}}, 3),
    ({"selection": {"points": [{"curve_number": 1, "point_number": 2}]}}, 2),
    ({"selection": {"points": [{"curve_number": 5, "point_index": 3}]}}, None),  # not a point trace
    ({"selection": {"points": [{"curve_number": 0, "point_index": 9}]}}, None),  # no such token
    ({"selection": {"points": []}}, None), ({"selection": None}, None), (None, None), ("garbage", None),
])
def test_a_click_is_read_safely(state, expected):
    assert clicked_token(state, 5) == expected


def test_the_lines_sentence_counts_what_is_drawn():
    assert lines_sentence(0, 0.9).startswith("No pair has a weight of 0.90 or more")
    assert lines_sentence(1, 0.3) == "Lines: 1 pair with weight ≥ 0.30, darker and thicker for more weight."
    assert lines_sentence(MAX_LINES + 7, 0.05).startswith(f"Lines: the strongest {MAX_LINES} of the {MAX_LINES + 7} pairs")


def test_layer_0s_points_do_not_move_with_the_scale_or_the_mask(bundled_model):
    """What the page says: the scale and the mask act after q·k, so layer 0's queries and keys stay; later ones move."""
    text = "The animal didn't cross the street because it was too tired."
    runs = [bundled_model.run(text, keep=True, **kw) for kw in ({}, {"scale": False}, {"mask": "causal"})]
    qks = [head_queries_and_keys(bundled_model, r, 0, 1) for r in runs]
    for other in qks[1:]:
        assert torch.equal(other.q, qks[0].q) and torch.equal(other.k, qks[0].k)
    later = [head_queries_and_keys(bundled_model, r, 3, 1) for r in runs]
    assert not torch.allclose(later[1].q, later[0].q) and not torch.allclose(later[2].q, later[0].q)


def test_the_page_opens_on_the_pronoun_and_the_first_word_before_it():
    bert = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street", "because", "it", "was", "too",
            "tired", ".", "[SEP]"]
    assert default_pair(bert) == (10, 2)  # it -> animal
    assert default_pair(["<s>", "ĠShe", "Ġsaid", "Ġhi"]) == (2, 1)  # a pronoun with nothing before it: no pair from it
    assert default_pair(["[CLS]", "hello", "world", "[SEP]"]) == (2, 1)
    assert default_pair(["x"]) == (0, 0)


def test_the_summary_says_whether_the_best_head_is_a_column_head():
    column = [HeadWeight(1, 5, 11, 0.67, 0.40), HeadWeight(2, 3, 1, 0.66, 0.11)]
    text = summary_sentence(column, 3, 2, LABELS, 5)
    assert "But its other queries give animal \\(2\\) **0.40** on average: a **column head**" in text
    specific = summary_sentence(column[1:], 3, 2, LABELS, 5)
    assert "Its other queries give animal \\(2\\) only **0.11** on average: it picks animal \\(2\\) out for it " \
           "\\(3\\)." in specific
    assert "column head" not in specific
    assert "No other query may see" in summary_sentence([HeadWeight(1, 0, 0, 1.0, None)], 3, 2, LABELS, 1)
    said = column_heads_sentence(column, 2, LABELS)
    assert said.startswith("Column head (the other queries give animal \\(2\\) at least 0.5× this query's weight")
    assert "layer 5 head 11 (others 0.40 vs 0.67)" in said and "layer 3 head 1" not in said
    assert column_heads_sentence(column[1:], 2, LABELS).startswith("This head is not a column head")
    assert column_heads_sentence(column[1:] * 2, 2, LABELS).startswith("None of these 2 heads is a column head")


def test_query_key_space_reconciles_direction_and_nearness_with_counts_of_this_head():
    """The plane's sentence ties "points the same way" and "nearness rarely predicts" to q·k = |q||k| cos θ, with
    counts recomputed here from the vectors."""
    model = attnviz.load_model()
    res = model.run("The animal didn't cross the street because it was too tired.", keep=True)
    qk = head_queries_and_keys(model, res, 0, 0)
    plane, weights = plane_of(qk, "shared"), res.attentions[0, 0]
    said = agreement_sentence(plane, weights, res.mask, qk, res.scale)
    top = weights.argmax(dim=1)
    cos = torch.nn.functional.cosine_similarity(qk.q[:, None, :].double(), qk.k[None, :, :].double(), dim=-1)
    by_cosine = int((cos.argmax(dim=1) == top).sum())
    near, live = nearest_key_agreement(plane.pca, weights)
    assert f"For {near} of {live} queries" in said
    assert f"the largest dot product q·k for {live} of {live} queries" in said
    assert f"(the largest cos θ) for {by_cosine} of {live}" in said
    assert "q·k = |q| |k| cos θ" in said and "distances only approximately" in said
    assert ("holds for every query" in said) == (by_cosine == live)


def test_query_key_space_says_so_few_only_when_few_agree():
    model = attnviz.load_model()
    res = model.run("The animal didn't cross the street because it was too tired.", keep=True)
    qk = head_queries_and_keys(model, res, 3, 1)
    for space in ("shared", "raw"):
        plane = plane_of(qk, space)
        near, live = nearest_key_agreement(plane.pca, res.attentions[3, 1])
        said = agreement_sentence(plane, res.attentions[3, 1], res.mask, qk, res.scale)
        assert ("Why so few" in said) == (2 * near < live), (space, near, said)
