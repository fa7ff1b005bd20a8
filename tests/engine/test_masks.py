"""Mask builders, the spec parser, and the errors a user gets for a bad mask."""

import numpy as np
import pytest
import torch

import attnviz
from attnviz import AttnvizError
from attnviz.engine.mask_kinds import padding_count, parse_mask
from attnviz.engine.masks import (
    causal_mask,
    combine_masks,
    custom_mask,
    global_local_mask,
    key_padding_mask,
    padding_mask_from_attention_mask,
    random_mask,
    strided_mask,
    window_mask,
)


def rows(text: str) -> torch.Tensor:
    """'110/011' -> the bool matrix it draws: patterns below are written the way they look."""
    return torch.tensor([[c == "1" for c in r] for r in text.split("/")])


# ---- builders ----------------------------------------------------------------------------


def test_causal_is_the_lower_triangle_with_diagonal():
    assert torch.equal(causal_mask(4), rows("1000/1100/1110/1111"))


def test_window_keeps_keys_within_w_positions():
    assert torch.equal(window_mask(5, 1), rows("11000/11100/01110/00111/00011"))
    i, j = torch.meshgrid(torch.arange(9), torch.arange(9), indexing="ij")
    assert torch.equal(window_mask(9, 3), (i - j).abs() <= 3)


def test_window_zero_is_the_diagonal():
    assert torch.equal(window_mask(4, 0), torch.eye(4, dtype=torch.bool))


def test_strided_keeps_multiples_of_the_stride():
    assert torch.equal(strided_mask(5, 2), rows("10101/01010/10101/01010/10101"))
    assert torch.equal(strided_mask(4, 1), torch.ones(4, 4, dtype=torch.bool))


def test_global_tokens_see_and_are_seen_by_all():
    mask = global_local_mask(6, 1, [0, 3])
    assert mask[[0, 3], :].all() and mask[:, [0, 3]].all()
    others = [1, 2, 4, 5]
    local = window_mask(6, 1)
    assert torch.equal(mask[others][:, others], local[others][:, others])


def test_padding_forbids_the_last_keys_for_every_query():
    assert torch.equal(key_padding_mask(4, 2), rows("1100/1100/1100/1100"))
    assert key_padding_mask(3, 0).all()


def test_padding_mask_from_attention_mask_broadcasts_over_heads_and_queries():
    m = padding_mask_from_attention_mask(torch.tensor([[1, 1, 0], [1, 1, 1]]))
    assert m.shape == (2, 1, 1, 3) and m.dtype == torch.bool
    assert m[0, 0, 0].tolist() == [True, True, False]


def test_random_mask_is_reproducible_per_seed_and_keeps_the_diagonal():
    a, b, c = random_mask(12, 0.3, seed=5), random_mask(12, 0.3, seed=5), random_mask(12, 0.3, seed=6)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert a.diagonal().all()
    assert random_mask(6, 0.0).equal(torch.eye(6, dtype=torch.bool))
    assert random_mask(6, 1.0).all()


def test_random_mask_keeps_about_the_asked_fraction():
    off_diagonal = ~torch.eye(100, dtype=torch.bool)
    kept = random_mask(100, 0.3, seed=1)[off_diagonal].float().mean().item()
    assert 0.25 < kept < 0.35


@pytest.mark.parametrize(
    "matrix",
    ["110/011/001", [[1, 1, 0], [0, 1, 1], [0, 0, 1]], np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1]]),
     np.array([[True, True, False], [False, True, True], [False, False, True]])],
    ids=["string", "lists", "numpy-int", "numpy-bool"],
)
def test_custom_mask_from_each_form(matrix):
    mask = custom_mask(matrix, n=3)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, rows("110/011/001"))


def test_combining_specs_with_and_intersects_them():
    assert torch.equal(parse_mask("causal&window:1", 4), rows("1000/1100/0110/0011"))
    assert torch.equal(parse_mask("causal & window:1", 4), causal_mask(4) & window_mask(4, 1))
    assert combine_masks(None, None) is None
    assert torch.equal(combine_masks(None, causal_mask(3)), causal_mask(3))


# ---- the spec parser ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("causal", causal_mask(5)),
        ("CAUSAL", causal_mask(5)),
        ("window:2", window_mask(5, 2)),
        ("strided:3", strided_mask(5, 3)),
        ("global:1:0,4", global_local_mask(5, 1, [0, 4])),
        ("random:0.5:7", random_mask(5, 0.5, 7)),
        ("padding:2", key_padding_mask(5, 2)),
        ("custom:11000/11100/01110/00111/00011", window_mask(5, 1)),
    ],
)
def test_parse_mask_builds_the_named_mask(spec, expected):
    assert torch.equal(parse_mask(spec, 5), expected)


@pytest.mark.parametrize("spec", [None, "none", "None", "", "full"])
def test_parse_mask_no_mask_is_none(spec):
    assert parse_mask(spec, 4) is None


def test_parse_mask_passes_a_bool_tensor_through():
    m = causal_mask(3)
    assert parse_mask(m, 3) is m


def test_padding_count_reads_the_padding_part_of_a_spec():
    assert padding_count("padding:3") == 3
    assert padding_count("causal&padding:2") == 2
    assert padding_count("causal") == 0
    assert padding_count(None) == 0
    assert padding_count(causal_mask(3)) == 0


def test_padding_spec_appends_pad_tokens_that_get_zero_weight():
    res = attnviz.load_model("toy").run("the cat sat", mask="padding:2")
    assert res.n_pad == 2 and res.tokens[-2:] == ["[PAD]", "[PAD]"]
    assert (res.attentions[..., -2:] == 0).all()


# ---- errors a user can cause -------------------------------------------------------------


def assert_user_error(match: str, fn, *args, **kwargs):
    with pytest.raises(AttnvizError, match=match) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, ValueError)  # callers that catch ValueError still work


def test_unknown_mask_name_lists_the_choices():
    assert_user_error(r"Unknown mask 'diagonal'.*causal.*window", parse_mask, "diagonal", 4)


def test_window_with_a_non_number_says_a_number_is_expected():
    assert_user_error(r"Window: keys at most this far away: expected a whole number, got 'x'", parse_mask, "window:x", 4)


def test_negative_window_says_the_allowed_range():
    assert_user_error(r"window: the number must be at least 0", parse_mask, "window:-1", 4)


def test_custom_mask_of_the_wrong_shape_names_both_shapes():
    assert_user_error(r"2×2 but the text has 3 tokens.*3×3", custom_mask, "11/01", 3)
    assert_user_error(r"2×2 but the text has 3 tokens", parse_mask, "custom:11/01", 3)


def test_ragged_custom_mask_asks_for_a_rectangle():
    assert_user_error(r"rectangular", custom_mask, [[1, 0], [1]])


def test_custom_mask_with_values_other_than_0_1_is_refused():
    assert_user_error(r"only hold 0.*and 1", custom_mask, [[0, 2], [1, 1]])
    assert_user_error(r"only hold 0.*and 1", custom_mask, np.array([[0.5, 1.0], [1.0, 1.0]]))
    assert_user_error(r"rows of 0 and 1", custom_mask, "12/01")


def test_custom_mask_must_be_two_dimensional():
    assert_user_error(r"2-D", custom_mask, [1, 0, 1])


def test_float_tensor_mask_is_refused_by_the_attention_function():
    q = torch.randn(3, 4)
    assert_user_error(r"boolean.*float32", attnviz.scaled_dot_product_attention, q, q, q, mask=torch.ones(3, 3))


def test_float_tensor_mask_is_refused_by_the_model():
    model = attnviz.load_model("toy")
    n = len(model.encode("the cat").ids)
    assert_user_error(r"boolean", model.run, "the cat", mask=torch.ones(n, n))


def test_mask_of_the_wrong_size_is_refused_by_the_attention_function():
    q = torch.randn(3, 4)
    assert_user_error(r"\(3, 3\)", attnviz.scaled_dot_product_attention, q, q, q, mask=causal_mask(4))


def test_global_token_out_of_range_names_the_token_and_the_range():
    assert_user_error(r"Global token 7 is outside the sequence \(0 to 3\)", parse_mask, "global:1:7", 4)


def test_random_keep_outside_0_1_is_refused():
    assert_user_error(r"between 0 and 1", parse_mask, "random:1.5", 4)


def test_padding_longer_than_the_text_is_refused():
    assert_user_error(r"padding: the number must be between 0 and 3", key_padding_mask, 3, 4)


def test_a_mask_of_the_wrong_type_is_refused():
    assert_user_error(r"not list", parse_mask, [[1, 0], [1, 1]], 2)
