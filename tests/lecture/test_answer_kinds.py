"""Answer kinds: the plan's answer table parsed by its kind with every wrong field named (a token question names its
one row, a choice marks one of its options, a number is a bare number or a computed quantity), a student's answer
checked and read back by what the kind asks, the class tallied, and the right answer found for the step's state."""

from dataclasses import dataclass

import pytest
import torch

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds import KINDS, NUMBER, PICK, Ask, answer_kind, parse_answer
from attnviz.lecture.kinds.base import numbers

TOKENS = ("[CLS]", "the", "animal", "was", "tired", "Ġit", "[SEP]")
WHERE = 'Step 4 ("Who?")'


@dataclass
class FakeRun:  # a run's two fields a token question reads
    tokens: list
    attentions: torch.Tensor


class StepOf:  # what a kind may read of a step: its model and its run
    model_spec = "x"

    def __init__(self, run=None, model=None):
        self._run, self.model = run, model

    def run(self):
        return self._run


def test_each_kind_is_one_entry_of_the_registry():
    assert set(KINDS) == {"token", "choice", "number"}
    for name, kind in KINDS.items():
        assert kind.name == name and kind.words and kind.example.startswith(f'answer = {{ kind = "{name}"')
        assert parse_answer(WHERE, __import__("tomllib").loads(kind.example)["answer"]).kind == name


def test_a_token_question_names_its_one_row_or_is_refused_naming_the_step_and_the_field():
    spec = parse_answer(WHERE, {"kind": "token", "query": "it", "layer": 2, "head": 5})
    assert (spec.query, spec.layer, spec.heads) == ("it", 2, (5,))
    mean = parse_answer(WHERE, {"kind": "token", "query": "it", "layer": 2, "heads": [0, 3]})
    assert mean.heads == (0, 3)
    for raw, said in [({"kind": "token", "query": "it"}, "Missing: answer.layer, answer.head"),
                      ({"kind": "token", "layer": 3, "head": 1}, "Missing: answer.query"),
                      ({"kind": "token", "query": "it", "layer": 3}, "Missing: answer.head"),
                      ({"kind": "token", "query": "it", "layer": -1, "head": 1}, "answer.layer"),
                      ({"kind": "token", "query": "it", "layer": 1, "head": True}, "answer.head"),
                      ({"kind": "token", "query": "it", "layer": 1, "head": 1, "heads": [1, 2]}, "not both"),
                      ({"kind": "token", "query": "it", "layer": 1, "heads": [2, 2]}, "answer.heads"),
                      ({"kind": "token", "query": "it", "layer": 1, "head": 1, "colour": 1}, "unknown field colour"),
                      ({"kind": "token", "query": "it", "layer": 1, "head": 1, "expected": "animal"},
                       "unknown field expected")]:
        with pytest.raises(AttnvizError, match=said) as err:
            parse_answer(WHERE, raw)
        assert str(err.value).startswith(WHERE)


def test_a_choice_marks_one_of_its_options_and_a_number_is_a_number():
    choice = parse_answer(WHERE, {"kind": "choice", "options": ["a", "b"], "expected": "b"})
    assert (choice.options, choice.expected) == (("a", "b"), "b")
    number = parse_answer(WHERE, {"kind": "number", "expected": 1, "tolerance": 0.01})
    assert (number.expected, number.tolerance) == (1.0, 0.01)
    computed = parse_answer(WHERE, {"kind": "number", "quantity": "dot_variance", "d_k": 256})
    assert (computed.quantity, computed.d_k, computed.expected) == ("dot_variance", 256, None)
    for raw, said in [({"kind": "choice", "options": ["a", "b"]}, "answer.expected = one of the options"),
                      ({"kind": "choice", "options": ["a", "b"], "expected": "The b one, because…"},
                       "answer.expected must be one of the options"),
                      ({"kind": "choice", "options": ["a", "a"], "expected": "a"}, "repeats an option"),
                      ({"kind": "number"}, "answer.expected .* or names answer.quantity"),
                      ({"kind": "number", "expected": "2: one per K/V head"}, "answer.expected must be the right number"),
                      ({"kind": "number", "expected": True}, "answer.expected"),
                      ({"kind": "number", "expected": 1, "tolerance": -1}, "answer.tolerance must be 0 or more"),
                      ({"kind": "number", "expected": 1, "quantity": "heads_per_kv"}, "not both"),
                      ({"kind": "number", "quantity": "mood"}, "answer.quantity is one of"),
                      ({"kind": "number", "quantity": "weight", "query": "ran", "layer": 0, "head": 0},
                       "needs answer.query and answer.key"),
                      ({"kind": "number", "quantity": "dot_variance"}, "needs answer.d_k"),
                      ({"kind": "number", "quantity": "dot_spread", "d_k": 0}, "answer.d_k is the width"),
                      ({"kind": "number", "quantity": "heads_per_kv", "d_k": 8}, "answer.d_k belongs"),
                      ({"kind": "number", "expected": 2, "key": "dog"}, "answer.key belongs"),
                      ({"kind": "essay"}, "answer.kind must be one of")]:
        with pytest.raises(AttnvizError, match=said) as err:
            parse_answer(WHERE, raw)
        assert str(err.value).startswith(WHERE)


def test_a_students_answer_is_checked_and_read_back_by_what_was_asked():
    pick = Ask("", PICK, tuple(range(len(TOKENS))), TOKENS, tuple(f"'{t}' (token {i})" for i, t in enumerate(TOKENS)))
    number = Ask("", NUMBER)
    assert pick.check(2) == "2" and pick.shown("2") == "'animal' (token 2)"
    assert number.check("0.25") == "0.25" and number.shown("256.0") == "256"
    # a phone's decimal keypad in a language that writes 0,25 has a comma and no point
    assert number.check("0,25") == "0.25" and number.check(" -1,5e3 ") == "-1500.0" and number.check("0,125") == "0.125"
    for ask, bad, said in [(pick, 7, "Pick one of"), (pick, "-1", "Pick one of"), (number, "nan", "between"),
                           (number, "1e12", "between"), (number, "x", "is not a number"), (number, "inf", "between"),
                           (number, "1,000.5", "is not a number"), (number, "1,2,3", "is not a number"),
                           (number, "1,000", "write 1000 or 1.000"),
                           (number, "9" * 5000, "That number has 5,000 characters")]:
        with pytest.raises(AttnvizError, match=said):
            ask.check(bad)


def test_the_class_is_tallied_in_the_options_order():
    assert Ask("", PICK, (0, 1, 2), ("a", "b", "c")).counts(["2", "2", "0", "9", "x"]) == [1, 0, 2]
    assert numbers(["1.5", "oops", "2", "inf"]) == [1.5, 2.0]


def test_the_right_answer_of_a_token_question_is_the_named_rows_largest_weight():
    att = torch.zeros(2, 3, len(TOKENS), len(TOKENS))  # (layers, heads, n_q, n_k)
    att[1, 0, 5, 2], att[1, 0, 5, 0] = 0.7, 0.3  # head 0: 'it' looks at 'animal'
    att[1, 2, 5, 4], att[1, 2, 5, 2] = 0.6, 0.4  # head 2: at 'tired'
    step = StepOf(FakeRun(list(TOKENS), att))
    one = parse_answer(WHERE, {"kind": "token", "query": "It", "layer": 1, "head": 0})  # Ġit: marks and case
    right = answer_kind(one).right(one, step)
    assert right.text == "'animal' (token 2), weight 0.70" and "layer 1, head 0" in right.source
    assert answer_kind(one).is_right(one, right, "2") and not answer_kind(one).is_right(one, right, "4")
    mean = parse_answer(WHERE, {"kind": "token", "query": "it", "layer": 1, "heads": [0, 2]})
    right = answer_kind(mean).right(mean, step)
    assert right.text == "'animal' (token 2), weight 0.55" and "layer 1, the mean of heads 0 and 2" in right.source
    for raw, said in [({"kind": "token", "query": "dog", "layer": 1, "head": 0}, "'dog' is not in this sentence"),
                      ({"kind": "token", "query": "it", "layer": 2, "head": 0}, "layers 0 to 1 and heads 0 to 2")]:
        spec = parse_answer(WHERE, raw)
        with pytest.raises(AttnvizError, match=said):
            answer_kind(spec).right(spec, step)


def test_one_answer_is_said_in_the_singular():
    att = torch.zeros(1, 1, len(TOKENS), len(TOKENS))  # (layers, heads, n_q, n_k)
    att[0, 0, 5, 2] = 1.0
    spec = parse_answer(WHERE, {"kind": "token", "query": "it", "layer": 0, "head": 0})
    kind = answer_kind(spec)
    right = kind.right(spec, StepOf(FakeRun(list(TOKENS), att)))
    shown = kind.reveal(spec, right, kind.ask(spec, right), ["2"])
    assert "The class (1 answer) and the model (layer 0, head 0)." in shown.caption
    assert "1 of 1 picked it" in shown.headline


def test_a_number_is_right_within_its_tolerance():
    spec = parse_answer(WHERE, {"kind": "number", "expected": 512, "tolerance": 50})
    right = answer_kind(spec).right(spec, StepOf())
    assert right.text == "512 ± 50" and right.source == "marked in the plan"
    assert [answer_kind(spec).is_right(spec, right, v) for v in ("512", "470", "561", "400", "x")] == \
        [True, True, True, False, False]
