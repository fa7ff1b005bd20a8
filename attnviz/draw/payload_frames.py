"""What the wrapper payloads (a switch's two states, a row of heatmaps) share: a JSON head, then whole payloads.

Layout (little-endian):
    4-byte magic  u32 JSON length  JSON (UTF-8, padded with spaces so that it ends on a 4-byte boundary)
    then per payload: u32 length, the payload, zero padding to 4
Every inner payload, and so its cells, starts on a 4-byte boundary: the browser reads uint16 and float32 cells
in place, without copying them.
"""

from __future__ import annotations

import json
import struct

LENGTH = struct.Struct("<I")


def wrap(magic: bytes, head: dict, payloads: list[bytes]) -> bytes:
    """magic, head and payloads in the layout above."""
    text = json.dumps(head).encode("utf-8")
    text += b" " * (-(len(magic) + LENGTH.size + len(text)) % 4)
    parts = [magic, LENGTH.pack(len(text)), text]
    for payload in payloads:
        parts += [LENGTH.pack(len(payload)), payload, b"\0" * (-len(payload) % 4)]
    return b"".join(parts)


def unwrap(payload: bytes, count_of) -> tuple[dict, list[bytes]]:
    """The head and the inner payloads of a wrapped payload; count_of(head) says how many it holds."""
    (length,) = LENGTH.unpack_from(payload, 4)
    offset = 4 + LENGTH.size + length
    head = json.loads(payload[4 + LENGTH.size:offset])
    found = []
    for _ in range(count_of(head)):
        (size,) = LENGTH.unpack_from(payload, offset)
        found.append(bytes(payload[offset + LENGTH.size:offset + LENGTH.size + size]))
        offset += LENGTH.size + size + (-size % 4)
    return head, found
