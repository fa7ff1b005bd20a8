"""The numbers task: words are written as the task says, held-out sentences never reach training, the
tokenizer splits digits and reads BART's special ids."""

import pytest
import torch

from attnviz.tasks import number_words as nw


@pytest.mark.parametrize("n,words", [
    (7, "seven"), (12, "twelve"), (20, "twenty"), (101, "one hundred one"), (110, "one hundred ten"),
    (40000, "forty thousand"), (342007, "three hundred forty two thousand seven"), (1000001, "one million one"),
    (999999999, "nine hundred ninety nine million nine hundred ninety nine thousand nine hundred ninety nine"),
])
def test_number_to_words(n, words):
    assert nw.number_to_words(n) == words


def test_training_never_draws_a_held_out_sentence_and_the_draw_is_seeded():
    train = nw.training_examples(3000, torch.Generator().manual_seed(0))
    held = nw.held_out_examples(300, seed=1)
    assert not {ex.source for ex in train} & {ex.source for ex in held}
    assert all(nw.is_held_out(ex.source) for ex in held) and not any(nw.is_held_out(ex.source) for ex in train)
    assert train[:50] == nw.training_examples(50, torch.Generator().manual_seed(0))
    assert len({ex.source for ex in held}) == len(held)


def test_round_numbers_are_common_enough_to_learn():
    gen = torch.Generator().manual_seed(0)
    numbers = [nw.draw_number(gen) for _ in range(3000)]
    assert all(1 <= n <= nw.MAX_VALUE for n in numbers)
    assert sum(n >= 1000 and n % 1000 == 0 for n in numbers) > 300  # "forty thousand", "seven hundred million"


def test_tokenizer_splits_digits_and_uses_bart_ids():
    tok = nw.build_tokenizer(96)
    src = tok.encode("Forty-two , one million")
    assert src.tokens == ["<s>", "forty", "two", ",", "one", "million", "</s>"]
    tgt = tok.encode("42 , 1000000")
    assert tgt.tokens == ["<s>", "4", "2", ",", "1", "0", "0", "0", "0", "0", "0", "</s>"]
    assert (tgt.ids[0], tgt.ids[-1]) == (nw.BOS_ID, nw.EOS_ID) and tok.token_to_id("<pad>") == nw.PAD_ID
    assert nw.digits_text(tgt.tokens) == "42, 1000000"
