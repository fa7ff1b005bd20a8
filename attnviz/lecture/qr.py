"""The QR code of a link, as a PNG a projector shows and a phone reads (segno: pure Python, no network)."""

from __future__ import annotations

import io

import segno


def qr_png(text: str, scale: int = 6) -> bytes:
    """A QR code of `text` as PNG bytes: error correction M (a projector's glare and a phone's angle cost some
    modules), at least `scale` pixels per module and the standard quiet zone of 4 modules around it."""
    code = segno.make_qr(text, error="m", boost_error=False)
    out = io.BytesIO()
    code.save(out, kind="png", scale=scale, border=4, dark="#000", light="#fff")
    return out.getvalue()
