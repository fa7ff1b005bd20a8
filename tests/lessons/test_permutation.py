"""Permutation equivariance: without positions the shuffled run is the original with its rows moved; with them, not."""

from dataclasses import replace

import pytest
import torch

import attnviz
from attnviz.engine.models.model import Model
from attnviz.errors import AttnvizError
from attnviz.lessons.positions.permutation import permutation_demo, shuffle_order, what_breaks_it

TEXT = "the quick brown fox jumps over the lazy dog"


@pytest.fixture(scope="module")
def toy_nopos():
    return attnviz.load_model("toy", positions=False)


def without_positions(model) -> Model:
    """The same weights with the position table taken out."""
    return Model(model.name + " (no positions)", model.family, replace(model.cfg, positions="none"),
                 replace(model.embedder, position=None),
                 model.layers, model.tokenizer, model.final_ln, model.source)


def test_without_positions_the_rows_shuffle_identically(toy_nopos):
    res = permutation_demo(toy_nopos, TEXT, seed=0)
    assert res.shuffled_tokens != res.tokens and sorted(res.shuffled_tokens) == sorted(res.tokens)
    assert res.attention_difference < 1e-5 and res.output_difference < 1e-5
    assert res.equivariant() and "set" in what_breaks_it(res)


def test_the_shuffled_run_matches_an_independent_run_of_the_shuffled_text(toy_nopos):
    res = permutation_demo(toy_nopos, TEXT, seed=4)
    shuffled = toy_nopos.run(" ".join(res.shuffled_tokens[1:-1]))  # the same words typed in the shuffled order
    order = torch.tensor(res.order)
    # row r of the shuffled run belongs to original token order[r]: moving the original's rows there must match
    expected = res.attentions[:, :, order][:, :, :, order]
    torch.testing.assert_close(shuffled.attentions, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(shuffled.hidden, res.hidden[order], atol=1e-5, rtol=0)


def test_minilm_with_its_positions_removed_is_equivariant_too(minilm):
    res = permutation_demo(without_positions(minilm), TEXT, seed=1)
    assert res.attention_difference < 1e-4 and res.output_difference < 1e-4


@pytest.mark.parametrize("which", ["toy", "minilm"])
def test_with_positions_the_shuffle_changes_the_results(which, toy, minilm):
    model = toy if which == "toy" else minilm
    res = permutation_demo(model, TEXT, seed=0)
    assert res.attention_difference > 1e-2 and res.output_difference > 1e-2
    assert not res.equivariant() and "position" in what_breaks_it(res)


def test_a_causal_mask_alone_breaks_equivariance(tiny_model_folder):
    gpt2 = without_positions(attnviz.load_model(str(tiny_model_folder("gpt2"))))
    res = permutation_demo(gpt2, "one two three four five six", seed=0)
    assert res.causal and not res.has_positions
    assert res.attention_difference > 1e-3
    assert "causal" in what_breaks_it(res)


def test_shuffle_order_moves_only_words_and_never_is_the_identity():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    for seed in range(20):
        order = shuffle_order(tokens, {"[CLS]", "[SEP]"}, seed)
        assert order == [0, 2, 1, 3]  # two words: the only non-identity shuffle
    tokens = ["[CLS]"] + list("abcdefg") + ["[SEP]"]
    order = shuffle_order(tokens, {"[CLS]", "[SEP]"}, 7)
    assert sorted(order) == list(range(9)) and order[0] == 0 and order[-1] == 8 and order != list(range(9))
    assert order == shuffle_order(tokens, {"[CLS]", "[SEP]"}, 7)  # seeded


@pytest.mark.parametrize("text", ["hello", "", "   "])
def test_texts_with_fewer_than_two_words_are_clear_errors(toy_nopos, text):
    with pytest.raises(AttnvizError):
        permutation_demo(toy_nopos, text)


def test_head_difference_is_the_put_back_difference_of_one_head(toy):
    res = permutation_demo(toy, TEXT, seed=2)
    diff = res.head_difference(1, 0)
    torch.testing.assert_close(diff, res.attentions[1, 0] - res.attentions_back[1, 0])
    assert float(diff.abs().max()) <= res.attention_difference
