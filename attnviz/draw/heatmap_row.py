"""Several heatmaps side by side in one component: a mask's M beside the weights it produces, in one piece.

A pair of heatmaps in st.columns is five elements of Streamlit's page (the columns, its two cells and two
components), each of which the browser renders and lays out; as one component it is one. The Masks lab shows
nine such pairs. Each heatmap keeps its own payload, name, kind and legend; the component lays them out in
equal columns.

Layout: b"AVRW", the head {"count": n}, then n payloads of attnviz.draw.heatmap_payload (or switch payloads), framed as
attnviz.draw.payload_frames says, left to right.
"""

from __future__ import annotations

from attnviz.draw.heatmap_payload import MAGIC as HEATMAP_MAGIC
from attnviz.draw.heatmap_switch import MAGIC as SWITCH_MAGIC
from attnviz.draw.payload_frames import unwrap, wrap
from attnviz.errors import AttnvizError

MAGIC = b"AVRW"


def row_payload(payloads: list[bytes]) -> bytes:
    """The payloads, drawn left to right in equal columns."""
    if not payloads or any(p[:4] not in (HEATMAP_MAGIC, SWITCH_MAGIC) for p in payloads):
        raise AttnvizError("A row of heatmaps needs at least one heatmap payload, and only heatmap payloads.")
    return wrap(MAGIC, {"count": len(payloads)}, list(payloads))


def row_parts(payload: bytes) -> list[bytes]:
    """The payloads a component draws: a row payload's, left to right; any other payload is one part."""
    if payload[:4] != MAGIC:
        return [payload]
    return unwrap(payload, lambda head: head["count"])[1]
