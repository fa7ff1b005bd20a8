"""Why attention, on the shipped GRU weights and the lesson's seeded held-out numbers: the fixed-size-vector
model's exact match falls as the source grows, the attention model's holds; the alignment and sentences are true."""

import pytest
import torch
from apptest_helpers import app_menu

from attnviz.lecture import load_plan
from attnviz.lessons.why_attention import bottleneck as lesson
from attnviz.lessons.why_attention import figures as wf
from attnviz.paths import LECTURES


@pytest.fixture(scope="module")
def curve():
    return lesson.accuracy_against_length()


def test_bottleneck_accuracy_falls_with_length_while_attention_holds(curve):
    assert curve.bins == ["1–8", "9–16", "17–24", "25–45"] and sum(curve.n) == curve.size == lesson.LESSON_N
    assert min(curve.n) >= 40  # every bin has enough examples to mean something
    bottleneck, attention = curve.bottleneck, curve.attention
    assert all(a >= b for a, b in zip(bottleneck, bottleneck[1:], strict=False))  # never rises with length
    assert bottleneck[0] - bottleneck[-1] >= BOTTLENECK_DROP
    assert min(attention) >= ATTENTION_FLOOR
    assert all(a > b for a, b in zip(attention[1:], bottleneck[1:], strict=True))


BOTTLENECK_DROP = 0.50  # measured: 83.1% -> 0.0% (docs/models.md)
ATTENTION_FLOOR = 0.95  # measured: 99.6% or more in every bin


def test_payload_and_sentences_carry_the_measured_figures(curve):
    payload = curve.as_payload()
    assert payload["x"] == curve.bins and payload["lines"]["fixed-size vector"] == curve.bottleneck
    text = " ".join(lesson.sentences(curve))
    assert f"{100 * curve.bottleneck[-1]:.1f}%" in text and f"{100 * curve.attention[-1]:.1f}%" in text


def test_the_lectures_notes_quote_the_measured_curve(curve):
    """The default lecture's step 2 says these figures aloud (its presenter notes): they are this curve's."""
    plan = load_plan(LECTURES / "attention.toml", {path: title for _, path, title in app_menu()})
    notes = " ".join(next(s for s in plan.steps if s.page == "why_attention").notes.split())
    low, high = min(curve.attention), max(curve.attention)
    assert (f"falls from {100 * curve.bottleneck[0]:.0f} % on the shortest sources to {100 * curve.bottleneck[-1]:.0f} "
            "% on the longest") in notes
    assert f"stays at {100 * low:.1f}–{100 * high:.0f} % in every length bin" in notes


def test_alignment_reads_each_number_where_it_is_written():
    al = lesson.alignment("three hundred forty two thousand seven , ninety")
    assert al.attention_answer == al.expected == "342007, 90"
    assert al.weights.shape == (len(al.output_labels), len(al.source_labels))
    assert torch.allclose(al.weights.sum(-1), torch.ones(len(al.output_labels)), atol=1e-5)
    # The digits of 90 look after the comma (the second number), those of 342007 before it.
    comma = al.source_labels.index(",")
    first = al.output_labels.index(",")
    assert all(int(row.argmax()) < comma for row in al.weights[:first])
    assert all(int(row.argmax()) >= comma for row in al.weights[first + 1:])
    assert int(al.weights[0].argmax()) == al.source_labels.index("three")  # the first digit reads its word
    payload = al.as_payload()
    assert payload["rows"] == al.output_labels and len(payload["values"][0]) == len(al.source_labels)


@pytest.mark.parametrize("text,expected", [("seven", "7"), ("Forty-two , one million one", "42, 1000001"),
                                           ("one hundred and five", None), ("ten ten", None)])
def test_expected_digits_only_for_sentences_the_task_writes(text, expected):
    assert lesson.expected_digits(text) == expected


@pytest.mark.parametrize("text,digits", [("one million", "1000000"), ("forty thousand", "40000"),
                                         ("one million one", "1000001"), ("seven hundred million", "700000000")])
def test_the_attention_model_writes_round_numbers_a_class_will_type(text, digits):
    assert lesson.alignment(text).attention_answer == digits


def test_the_attention_sentence_names_every_bin_with_its_figure(curve):
    """It said "gets 100.0% and 100.0%": which bins, and not the 99.6% one between them."""
    said = lesson.sentences(curve)[1]
    for value, label in zip(curve.attention, curve.bins, strict=True):
        assert f"{100 * value:.1f}% ({label})" in said
    assert "words and commas" in lesson.sentences(curve)[0]  # what a length counts, as the caption says


def test_the_axis_counts_what_the_caption_counts(curve):
    title = wf.accuracy_figure(curve).layout.xaxis.title.text
    assert title.startswith("source length in words and commas")


def test_the_equations_symbols_are_defined(curve):
    latex, legend = wf.encoder_decoder_latex(), wf.encoder_decoder_legend()
    assert "h}_S" in latex and "s_{i-1}" in latex
    for symbol in ("$S$", "$h_j", "$s_{i-1}$", "$c_i$", r"$\alpha_{ij}$"):
        assert symbol in legend, symbol
    assert "words and commas" in legend
