"""The switch payload: one heatmap in both states of a sidebar switch, each part decoding to its own matrix."""

import numpy as np
import pytest

from attnviz.draw.heatmap_payload import decode_payload, heatmap_payload
from attnviz.draw.heatmap_switch import shown_payload, split_switch_payload, switch_payload
from attnviz.errors import AttnvizError


def payloads(toy, text: str = "red green blue"):
    """The toy's layer-1 weights with and without 1/√d_k, as two payloads, and the two runs."""
    scaled, unscaled = (toy.run(text, scale=s) for s in (True, False))
    title = ["head 0", "head 1"]
    return (heatmap_payload(scaled.attentions[1], scaled.labels, titles=title, name="grid"),
            heatmap_payload(unscaled.attentions[1], unscaled.labels, titles=title, name="grid"), scaled, unscaled)


@pytest.mark.parametrize("shown_state", [True, False])
def test_both_states_come_back_whole_and_the_shown_one_first(toy, shown_state):
    scaled, unscaled, run_scaled, run_unscaled = payloads(toy)
    shown, other = (scaled, unscaled) if shown_state else (unscaled, scaled)
    packed = switch_payload("scaled", shown_state, shown, other)
    control, states = split_switch_payload(packed)
    assert control == "scaled" and list(states) == [shown_state, not shown_state]
    assert states[shown_state] == shown and states[not shown_state] == other  # byte for byte
    assert shown_payload(packed) == shown
    np.testing.assert_allclose(decode_payload(states[True])[1], run_scaled.attentions[1].numpy(), atol=1e-5)
    np.testing.assert_allclose(decode_payload(states[False])[1], run_unscaled.attentions[1].numpy(), atol=1e-5)


def test_every_part_starts_on_a_four_byte_boundary():
    """The browser reads uint16 cells in place only where they are aligned: the header and each payload keep
    the next part on a multiple of 4, whatever their lengths (one 3 × 3 panel of uint16: 18 bytes of cells)."""
    w = np.full((3, 3), 1 / 3)
    one = heatmap_payload(w, list("abc"), titles=["head 0"], bytes_per_cell=2)
    assert len(one) % 4 == 2  # this payload leaves the next part unaligned unless padded
    packed = switch_payload("a", True, one, one)
    length = int.from_bytes(packed[4:8], "little")
    first = 8 + length
    size = int.from_bytes(packed[first:first + 4], "little")
    second = first + 4 + size + (-size % 4)
    assert first % 4 == 0 and second % 4 == 0 and packed[second + 4:second + 8] == b"AVHM"
    assert split_switch_payload(packed)[1] == {True: one, False: one}


def test_a_plain_payload_is_its_own_shown_payload_and_names_no_switch(toy):
    scaled, *_ = payloads(toy)
    assert shown_payload(scaled) == scaled
    assert split_switch_payload(scaled) == (None, {})


@pytest.mark.parametrize("control, first, second", [("", b"AVHM", b"AVHM"), ("s", b"nope", b"AVHM"),
                                                    ("s", b"AVHM", b"")])
def test_a_switch_needs_a_key_and_two_heatmap_payloads(control, first, second):
    with pytest.raises(AttnvizError, match="two heatmap payloads"):
        switch_payload(control, True, first, second)
