"""The custom mask editor's table <-> mask <-> spec conversions and its starting point."""

import torch

from attnviz.engine.mask_kinds import parse_mask
from attnviz.engine.masks import causal_mask
from attnviz.lessons.masks.editor import (
    forbidden_rows,
    frame_to_mask,
    mask_to_frame,
    mask_to_spec,
    position_names,
    starting_mask,
)

LABELS = ["[CLS]", "the", "the", "[SEP]"]


def test_names_keep_repeated_tokens_apart():
    assert position_names(LABELS) == ["0·[CLS]", "1·the", "2·the", "3·[SEP]"]


def test_frame_round_trip_and_spec_round_trip():
    mask = parse_mask("window:1", 4)
    frame = mask_to_frame(mask, LABELS)
    assert frame.shape == (4, 4) and list(frame.columns) == position_names(LABELS)
    assert torch.equal(frame_to_mask(frame), mask)
    spec = mask_to_spec(mask)
    assert spec == "custom:1100/1110/0111/0011"
    assert torch.equal(parse_mask(spec, 4), mask)


def test_an_edit_in_the_table_changes_the_mask():
    frame = mask_to_frame(causal_mask(4), LABELS).astype(object)  # object: a cell may be None
    frame.iloc[2, :] = False  # untick all of query 2
    frame.iloc[0, 3] = None  # a cleared cell counts as forbidden
    mask = frame_to_mask(frame)
    assert forbidden_rows(mask) == [2]
    assert mask[0].tolist() == [True, False, False, False]


def test_start_from_the_sidebar_spec_when_it_fits_else_causal_with_a_reason():
    mask, problem = starting_mask("custom:1000/1100/1110/1111", 4)
    assert problem is None and torch.equal(mask, causal_mask(4))
    mask, problem = starting_mask("custom:10/11", 4)
    assert torch.equal(mask, causal_mask(4)) and "2×2" in problem and "4 tokens" in problem
    assert starting_mask(None, 3)[1] is None and starting_mask("custom:", 3)[1] is None
    assert "0 and 1" in starting_mask("custom:12/21", 2)[1]
