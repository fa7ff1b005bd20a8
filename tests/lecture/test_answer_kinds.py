"""Answer kinds: a student's answer checked (what is allowed is said), the class's answers tallied, the query token
found, and the plan's answer table parsed with every wrong field named."""

import pytest

from attnviz.errors import AttnvizError
from attnviz.lecture.answer_kinds import (
    AnswerSpec,
    check_answer,
    choice_counts,
    numbers,
    parse_answer,
    query_position,
    right_choice,
    right_number,
    shown_answer,
    token_counts,
)

TOKENS = ("[CLS]", "the", "animal", "was", "tired", "Ġit", "[SEP]")


def test_a_students_answer_is_checked_by_its_kind():
    token, choice, number = AnswerSpec("token"), AnswerSpec("choice", ("layer 0", "layer 3")), AnswerSpec("number")
    assert check_answer(token, 2, TOKENS) == "2" and shown_answer(token, "2", TOKENS) == "'animal' (token 2)"
    assert check_answer(choice, " layer 3 ", TOKENS) == "layer 3"
    assert check_answer(number, "0.25") == "0.25" and shown_answer(number, "256.0") == "256"
    for spec, bad, said in [(token, 7, "positions 0 to 6"), (token, "-1", "positions 0 to 6"),
                            (token, "two", "positions 0 to 6"), (choice, "layer 9", "Pick one of the options"),
                            (number, "nan", "between"), (number, "1e12", "between"), (number, "x", "is not a number"),
                            (number, "inf", "between")]:
        with pytest.raises(AttnvizError, match=said):
            check_answer(spec, bad, TOKENS)


def test_the_class_is_tallied_in_the_plans_order():
    assert token_counts(["2", "2", "5", "9", "x"], len(TOKENS)) == [0, 0, 2, 0, 0, 1, 0]  # 9: another sentence's
    assert choice_counts(AnswerSpec("choice", ("a", "b", "c")), ["c", "a", "c"]) == [1, 0, 2]
    assert numbers(["1.5", "oops", "2"]) == [1.5, 2.0]
    assert right_choice(AnswerSpec("choice", ("a", "b")), "b") == "b" and right_choice(AnswerSpec("choice", ("a",)), "z") is None
    assert right_number("256") == 256.0 and right_number("about 256") is None


def test_the_query_token_is_the_plans_else_the_selected_else_the_last():
    assert query_position(AnswerSpec("token", query="It"), TOKENS, 1) == 5  # Ġit: the tokenizer's mark and case
    assert query_position(AnswerSpec("token"), TOKENS, 3) == 3
    assert query_position(AnswerSpec("token"), TOKENS, None) == 6
    with pytest.raises(AttnvizError, match="'dog' is not in this sentence"):
        query_position(AnswerSpec("token", query="dog"), TOKENS, None)


def test_an_answer_table_is_parsed_with_layer_and_head_for_tokens_only():
    spec = parse_answer("Step 2", {"kind": "token", "query": "it", "layer": 2, "head": 5})
    assert (spec.query, spec.layer, spec.head) == ("it", 2, 5)
    for raw, said in [({"kind": "choice", "options": ["a", "b"], "head": 1}, "answer.head"),
                      ({"kind": "token", "layer": -1}, "answer.layer"), ({"kind": "token", "head": True}, "answer.head"),
                      ({"kind": "token", "colour": 1}, "unknown field colour")]:
        with pytest.raises(AttnvizError, match=said):
            parse_answer("Step 2", raw)


def test_a_number_answer_may_name_the_quantity_attnviz_computes():
    weight = parse_answer("Step 4", {"kind": "number", "quantity": "weight", "query": "ran", "key": "dog", "head": 1})
    assert (weight.quantity, weight.query, weight.key, weight.layer, weight.head) == ("weight", "ran", "dog", None, 1)
    variance = parse_answer("Step 4", {"kind": "number", "quantity": "dot_variance", "d_k": 256})
    assert (variance.quantity, variance.d_k) == ("dot_variance", 256)
    assert parse_answer("Step 4", {"kind": "number"}).quantity == ""  # the plan's expected answer marks it
    for raw, said in [({"kind": "number", "quantity": "mood"}, "answer.quantity is one of"),
                      ({"kind": "choice", "options": ["a", "b"], "quantity": "weight"}, "answer.quantity"),
                      ({"kind": "number", "quantity": "weight", "query": "ran"}, "needs answer.key"),
                      ({"kind": "number", "quantity": "dot_variance"}, "needs answer.d_k"),
                      ({"kind": "number", "quantity": "dot_spread", "d_k": 0}, "answer.d_k is a whole number"),
                      ({"kind": "number", "quantity": "heads_per_kv", "d_k": 8}, "answer.d_k"),
                      ({"kind": "number", "key": "dog"}, "answer.key"), ({"kind": "number", "head": 1}, "answer.head"),
                      ({"kind": "token", "key": "dog"}, "answer.key")]:
        with pytest.raises(AttnvizError, match=said):
            parse_answer("Step 4", raw)
