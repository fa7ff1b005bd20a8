"""attnviz-tiny-bart on the Cross-attention page (attnviz/lessons/cross_attention/number_task.py): the sentences the
page says about its alignment are measured here; what it refuses is refused with the reason."""

import pytest

import attnviz
from attnviz.errors import AttnvizError
from attnviz.lessons.cross_attention import number_task as nt
from attnviz.lessons.why_attention.tiny_bart import tiny_bart
from attnviz.tasks.number_words import ONES, TENS, check_known_words, held_out_examples


@pytest.fixture(scope="module")
def bart():
    return attnviz.load_model("attnviz-tiny-bart")


def test_the_alignment_claim_is_what_the_model_does(bart):
    sharp = nt.head_sharpness(bart, held_out_examples(nt.CLAIM_EXAMPLES, seed=nt.CLAIM_SEED))
    assert "on 200 held-out sentences" in nt.ALIGNMENT_CLAIM and nt.CLAIM_EXAMPLES == 200
    assert sharp[1, 1].monotone_share == 1.0  # "never moved left"
    assert round(sharp[1, 1].mean_max_weight, 2) == 0.83
    assert sharp[1, 1].mean_max_weight == max(s.mean_max_weight for s in sharp.values())  # "the clearest"
    layer0 = [sharp[0, h].mean_max_weight for h in range(4)]
    assert (round(min(layer0), 2), round(max(layer0), 2)) == (0.16, 0.49)
    assert min(sharp[1, h].mean_max_weight for h in range(4)) > max(layer0)  # layer 1 sharper than layer 0
    assert min(sharp[1, h].monotone_share for h in range(4)) >= 0.9  # layer 1's heads step left to right
    assert max(sharp[0, h].monotone_share for h in range(4)) < 0.9  # layer 0's do not
    assert "0.16 to 0.49" in nt.ALIGNMENT_CLAIM and "0.83" in nt.ALIGNMENT_CLAIM


def test_the_default_sentence_reads_as_the_claim_says(bart):
    answer = nt.greedy_output(bart, nt.DEFAULT_SOURCE)
    assert answer.text == "3412" and answer.finished
    res = bart.run(nt.DEFAULT_SOURCE, target=" ".join(answer.tokens))
    rows = nt.written_labels(res.labels)
    assert rows == ["</s>→<s>", "<s>→3", "3→4", "4→1", "1→2", "2→</s>"]
    links = {link.row: link.source for link in nt.strongest_links(res.cross_attentions[1, 1], rows, res.source_labels)}
    assert (links["<s>→3"], links["3→4"], links["4→1"], links["1→2"]) == ("three", "four", "twelve", "twelve")
    assert "thousand" not in links.values()


@pytest.mark.parametrize("source,message", [
    ("three thousand four hundred and twelve", "does not know 'and'"),
    ("forty two cats", "does not know 'cats'"),
    ("   ", "Type a number in words"),
    ("one " * 120, "longer than attnviz-tiny-bart can read"),
])
def test_sources_it_cannot_read_are_refused_with_the_reason(bart, source, message):
    with pytest.raises(AttnvizError, match=message):
        nt.check_source(bart, source)


def test_a_source_past_the_training_range_is_read_with_a_warning(bart):
    assert nt.check_source(bart, nt.DEFAULT_SOURCE) == []
    notes = nt.check_source(bart, "one , two , three , four")
    assert len(notes) == 1 and "longer than anything attnviz-tiny-bart was trained on" in notes[0]


@pytest.mark.parametrize("target,message", [("34a2", "cannot take 'a'"), ("three", "cannot take 't', 'h', 'r', 'e'"),
                                            ("", "Type a target in digits"), ("1" * 200, "at most 96 tokens")])
def test_typed_targets_must_be_digits(bart, target, message):
    with pytest.raises(AttnvizError, match=message):
        nt.check_digit_target(bart, target)
    nt.check_digit_target(bart, "342, 90")


def test_the_unknown_word_message_names_the_words_the_task_reads():
    with pytest.raises(AttnvizError) as err:
        check_known_words(tiny_bart().tokenizer.backend, "seven cats", "attnviz-tiny-bart")
    said = str(err.value)
    assert f"({ONES[0]} ... {ONES[-1]}, {TENS[2]} ... {TENS[-1]}, hundred, thousand, million)" in said and "'cats'" in said
