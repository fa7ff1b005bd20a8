"""The row payload: several heatmaps drawn side by side by one component, each coming back whole, in order."""

import numpy as np
import pytest

from attnviz.draw.heatmap_payload import decode_payload, heatmap_payload
from attnviz.draw.heatmap_row import row_parts, row_payload
from attnviz.draw.heatmap_switch import switch_payload
from attnviz.errors import AttnvizError
from attnviz.lessons.masks.gallery import additive_matrix


def mask_and_weights(toy, text: str = "red green blue"):
    """The toy's causal M (bits) and its layer-0 head-1 weights (uint16): the two halves of a Masks lab card."""
    res = toy.run(text, mask="causal")
    n = len(res.labels)
    m = heatmap_payload(additive_matrix(res.mask, n), res.labels, titles=["M"], kind="signed", limit=1.0, name="c_mask")
    w = heatmap_payload(res.attentions[0, 1], res.labels, titles=["weights"], name="c_weights")
    return m, w, res


def test_the_parts_come_back_byte_for_byte_left_to_right(toy):
    m, w, res = mask_and_weights(toy)
    parts = row_parts(row_payload([m, w]))
    assert parts == [m, w]
    meta_m, cells_m = decode_payload(parts[0])
    meta_w, cells_w = decode_payload(parts[1])
    assert (meta_m["name"], meta_m["kind"], meta_m["bytes_per_cell"]) == ("c_mask", "signed", 0)
    assert (meta_w["name"], meta_w["kind"]) == ("c_weights", "weights")
    n = len(res.labels)
    np.testing.assert_array_equal(cells_m[0], np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, 0.0))
    np.testing.assert_allclose(cells_w[0], res.attentions[0, 1].numpy(), atol=1e-4)


def test_every_part_starts_on_a_four_byte_boundary():
    """uint16 cells are read in place only where aligned: a part of odd length is padded before the next."""
    one = heatmap_payload(np.full((3, 3), 1 / 3), list("abc"), titles=["h"], bytes_per_cell=2)
    assert len(one) % 4 == 2
    packed = row_payload([one, one, one])
    offset = 8 + int.from_bytes(packed[4:8], "little")
    for _ in range(3):
        assert offset % 4 == 0 and packed[offset + 4:offset + 8] == b"AVHM"
        size = int.from_bytes(packed[offset:offset + 4], "little")
        offset += 4 + size + (-size % 4)
    assert offset == len(packed) and row_parts(packed) == [one, one, one]


def test_a_part_may_carry_both_states_of_a_switch(toy):
    m, w, _ = mask_and_weights(toy)
    switched = switch_payload("scaled", True, w, w)
    assert row_parts(row_payload([m, switched])) == [m, switched]


def test_any_other_payload_is_one_part(toy):
    m, _, _ = mask_and_weights(toy)
    assert row_parts(m) == [m]


@pytest.mark.parametrize("parts", [[], [b"not a heatmap"], [b"AVRW...."]])
def test_a_row_of_nothing_or_of_foreign_bytes_is_refused(parts):
    with pytest.raises(AttnvizError, match="row of heatmaps"):
        row_payload(parts)
