"""Tokens as plotly axis categories, log axes labelled by their decades, and plotly's arrays read back.

Attention patterns are drawn by the canvas component (attnviz/draw/heatmap.py); plotly draws only the
line, bar and histogram charts. Where those charts put tokens on an axis, each token is one category:
repeated tokens are kept apart with zero-width marks, and '<', '>' and '&' are escaped.
"""

from __future__ import annotations

import base64

import numpy as np

ZERO_WIDTHS = "\u200b\u200c\u200d\u2060"  # invisible marks that tell repeated tokens apart

# A log axis's settings that label only its decades, written out in full (0.001, 0.01): plotly's in-between
# labels read "2" and "5" where 0.02 and 0.05 are meant, and its SI suffixes ("100µ", "10m") look like units.
DECADE_LABELS = {"minorloglabels": "none", "exponentformat": "none"}


def invisible_suffix(count: int) -> str:
    """The count written in base 4 with zero-width characters: '' for 0, and O(log n) long."""
    digits = ""
    while count:
        count, digit = divmod(count, len(ZERO_WIDTHS))
        digits = ZERO_WIDTHS[digit] + digits
    return digits


def distinct_labels(labels: list[str]) -> list[str]:
    """Axis categories that stay distinct when a token repeats, yet read the same ('the', 'the' + marks)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        label = plain_text(label) if label.strip() else "␣"
        count = seen.get(label, 0)
        seen[label] = count + 1
        out.append(label + invisible_suffix(count))
    return out


def visible_text(label: str) -> str:
    """A drawn label without the invisible marks that `distinct_labels` added."""
    return label.translate({ord(c): None for c in ZERO_WIDTHS})


def plain_text(label: str) -> str:
    """A token as plotly text that shows exactly what was typed: plotly reads a few HTML tags in
    labels (<b>, <a href>, <br>), so '<', '>' and '&' are escaped and never become markup."""
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def decode_plotly_array(value) -> np.ndarray:
    """The numbers of a plotly array as sent to the browser (a list, or a base64 'bdata' typed array)."""
    if isinstance(value, dict) and "bdata" in value:
        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            raw = raw.reshape(dims)
        return raw
    return np.asarray(value)
