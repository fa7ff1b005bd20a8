"""One heatmap in both states of a switch, so the browser can flip it the moment the switch flips.

The explorer's 1/√d_k switch changes every heatmap on the page, and Streamlit answers a switch with a rerun:
the new payloads arrive after a round trip and a re-render of what surrounds them (about 200 ms on a small
machine, four to eight times a bare toggle). When a heatmap's payload also holds the heatmap as it is with the
switch in its other state, the component draws that one as soon as the switch changes, and the rerun's
payload, when it lands, holds the same cells. Both are the from-scratch run's numbers.

Layout: b"AVSW", the head {"control": the switch's widget key, "states": [first's, second's]}, then two payloads of
attnviz.draw.heatmap_payload, framed as attnviz.draw.payload_frames says. The first is the one drawn now (the switch's
present state).
"""

from __future__ import annotations

from attnviz.draw.heatmap_payload import MAGIC as HEATMAP_MAGIC
from attnviz.draw.payload_frames import unwrap, wrap
from attnviz.errors import AttnvizError

MAGIC = b"AVSW"


def switch_payload(control: str, shown_state: bool, shown: bytes, other: bytes) -> bytes:
    """The payload `shown` (drawn with the switch keyed `control` in shown_state) and `other` (its other state)."""
    if not control or shown[:4] != HEATMAP_MAGIC or other[:4] != HEATMAP_MAGIC:
        raise AttnvizError("A switch payload needs the switch's key and two heatmap payloads.")
    return wrap(MAGIC, {"control": control, "states": [bool(shown_state), not shown_state]}, [shown, other])


def split_switch_payload(payload: bytes) -> tuple[str | None, dict[bool, bytes]]:
    """A heatmap payload -> (None, {}); a switch payload -> (its control, {state: that state's heatmap payload})."""
    if payload[:4] != MAGIC:
        return None, {}
    head, payloads = unwrap(payload, lambda head: len(head["states"]))
    return head["control"], dict(zip(head["states"], payloads, strict=True))


def shown_payload(payload: bytes) -> bytes:
    """The heatmap payload the browser draws first: the payload itself, or a switch payload's present state's."""
    if payload[:4] != MAGIC:
        return payload
    _, states = split_switch_payload(payload)
    return next(iter(states.values()))  # the states in their stored order: the present one first
