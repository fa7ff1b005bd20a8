"""Find the head: the ranking on patterns built by hand, and on the bundled model's real sentence."""

from types import SimpleNamespace

import pytest
import torch

import attnviz
from attnviz.analysis.head_search import (
    allowed_keys,
    others_weights,
    pair_weights,
    rank_heads_for_pair,
    token_position,
)
from attnviz.errors import AttnvizError

SENTENCE = "The animal didn't cross the street because it was too tired."


def run_of(attentions, mask=None, tokens=None):
    n = attentions.shape[-1]
    return SimpleNamespace(attentions=attentions, mask=mask, tokens=tokens or [f"t{i}" for i in range(n)])


def test_the_ranking_is_every_head_largest_first_with_ties_in_layer_head_order():
    a = torch.full((2, 3, 4, 4), 0.25)  # every row spread evenly ...
    a[1, 2, 3] = torch.tensor([0.0, 0.9, 0.1, 0.0])  # ... but layer 1 head 2, query 3 puts 0.9 on key 1
    a[0, 1, 3] = torch.tensor([0.1, 0.5, 0.2, 0.2])
    ranked = rank_heads_for_pair(run_of(a), 3, 1)
    assert [(h.rank, h.layer, h.head) for h in ranked[:2]] == [(1, 1, 2), (2, 0, 1)]
    assert ranked[0].weight == pytest.approx(0.9) and ranked[1].weight == pytest.approx(0.5)
    assert len(ranked) == 6 and [(h.layer, h.head) for h in ranked[2:]] == [(0, 0), (0, 2), (1, 0), (1, 1)]
    assert pair_weights(a, 3, 1)[1, 2] == pytest.approx(0.9)


@pytest.mark.parametrize("query,key", [(4, 0), (0, 4), (-1, 0), (0, -1)])
def test_a_token_outside_the_text_is_a_clear_error(query, key):
    with pytest.raises(AttnvizError, match=r"this text has 4 tokens, positions 0 to 3"):
        rank_heads_for_pair(run_of(torch.full((1, 1, 4, 4), 0.25)), query, key)


def test_allowed_keys_follow_the_mask():
    mask = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    assert allowed_keys(run_of(torch.zeros(1, 1, 4, 4), mask), 2) == 3
    assert allowed_keys(run_of(torch.zeros(1, 1, 4, 4)), 2) == 4


@pytest.mark.parametrize("reference,expected", [("2", 2), ("animal", 2), ("Animal", 2), ("animal (2)", 2),
                                                ("2: animal", 2), (" it ", 4), ("the", 1)])
def test_a_token_in_a_link_by_position_or_text(reference, expected):
    assert token_position(reference, ["[CLS]", "the", "animal", "the", "it"], "query") == expected


@pytest.mark.parametrize("reference,message", [("dog", "“dog” is not a token of this text"),
                                               ("", "“” is not a token"), ("9", "no query token at position 9")])
def test_a_token_not_in_the_text_is_named(reference, message):
    with pytest.raises(AttnvizError, match=message):
        token_position(reference, ["[CLS]", "the", "animal"], "query")


def test_it_looks_at_animal_most_in_layer_3_head_1_of_minilm(bundled_model):
    """The issue's example, on the bundled all-MiniLM-L6-v2 at its trained settings (no mask, 1/√d_k)."""
    res = bundled_model.run(SENTENCE)
    it, animal = res.tokens.index("it"), res.tokens.index("animal")
    assert (it, animal) == (10, 2)
    ranked = rank_heads_for_pair(res, it, animal)
    assert len(ranked) == 72
    assert (ranked[0].layer, ranked[0].head) == (3, 1) and round(ranked[0].weight, 2) == 0.68
    assert (ranked[1].layer, ranked[1].head) == (5, 11)  # a close second (0.673)
    assert ranked[0].weight == pytest.approx(float(res.attentions[3, 1, it, animal]))
    assert all(a.weight >= b.weight for a, b in zip(ranked, ranked[1:], strict=False))


def test_the_other_queries_mean_is_computed_by_hand():
    a = torch.zeros(1, 2, 4, 4)
    a[0, 0, :, 1] = torch.tensor([0.2, 0.4, 0.6, 0.8])  # head 0: key 1 gets 0.2 .. 0.8 from queries 0 .. 3
    a[0, 1, :, 1] = torch.tensor([0.0, 0.0, 0.0, 0.9])  # head 1: only query 3 looks at key 1
    ranked = {(h.layer, h.head): h for h in rank_heads_for_pair(run_of(a), 3, 1)}
    assert ranked[0, 0].others == pytest.approx((0.2 + 0.4 + 0.6) / 3)  # 0.4 ≥ 0.5 × 0.8: a column head
    assert ranked[0, 0].column
    assert ranked[0, 1].others == pytest.approx(0.0) and not ranked[0, 1].column
    # with a causal mask, query 0 cannot see key 1: the mean is over queries 2 alone (query 3 is the one asked)
    causal = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    masked = {(h.layer, h.head): h for h in rank_heads_for_pair(run_of(a, causal), 3, 1)}
    assert masked[0, 0].others == pytest.approx((0.4 + 0.6) / 2)
    # no other query may see key 3 under a causal mask: there is no baseline, and no column head
    alone = rank_heads_for_pair(run_of(a, causal), 3, 3)
    assert all(h.others is None and not h.column for h in alone)
    assert others_weights(a, 3, 3, causal) is None


def test_on_the_bundled_sentence_layer_5_head_11_is_a_column_head_and_layer_3_head_1_is_not():
    """The issue's measurement: both give "animal" about 0.68 from "it", but in layer 5 head 11 six of the sixteen
    queries give "animal" at least 0.5."""
    res = attnviz.load_model().run(SENTENCE)
    q, k = res.labels.index("it"), res.labels.index("animal")
    ranked = {(h.layer, h.head): h for h in rank_heads_for_pair(res, q, k)}
    a = res.attentions
    for layer, head in ((5, 11), (3, 1)):
        column = a[layer, head, :, k]
        assert ranked[layer, head].others == pytest.approx(float((column.sum() - column[q]) / (len(column) - 1)))
    assert ranked[5, 11].column and int((a[5, 11, :, k] >= 0.5).sum()) == 6
    assert not ranked[3, 1].column
