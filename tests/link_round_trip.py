"""The link the app writes, as a browser writes it: what the server put in the address itself (keep_in_link, a
corrected value) and, for each widget bound to the URL, what Streamlit's front end writes: the value as JavaScript's
String() spells it (an option by its label, a repeated key for several), and nothing while the widget holds its
default (the address keeps only what changed). tests/browser/test_browser_links.py checks this against Chromium's own
address bar. And what is drawn, to compare a link's view with the view it was copied from.
"""

from __future__ import annotations

from collections.abc import Iterable

from apptest_helpers import heatmap_payloads
from link_sweep import _widgets


def js_string(x) -> str:
    """A number or a flag as JavaScript's String() writes it (1.0 -> "1", True -> "true")."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return str(x)


def bound_widgets(at) -> list:
    return [e for e in _widgets(at) if getattr(e.proto, "query_param_key", "")]


def written_value(element) -> str | list[str] | None:
    """What the front end writes for this bound widget now; None while it holds its default."""
    proto, kind = element.proto, element.type
    options = list(getattr(proto, "options", []))
    if kind in ("selectbox", "radio"):
        index = element.index
        default = list(proto.default) if isinstance(proto.default, Iterable) else [proto.default]
        if index is None or [index] == default:
            return None
        return options[index]
    if kind == "multiselect":
        indices = sorted(element.indices)
        return None if indices == sorted(proto.default) else [options[i] for i in indices]
    if kind in ("toggle", "checkbox"):
        return None if bool(element.value) == bool(proto.default) else js_string(bool(element.value))
    if kind == "number_input":
        value = element.value
        return None if value is None or (proto.HasField("default") and value == proto.default) else js_string(value)
    if kind == "slider":
        values = element.value if isinstance(element.value, (list, tuple)) else [element.value]
        return None if [float(v) for v in values] == list(proto.default) else [js_string(v) for v in values] \
            if len(values) > 1 else js_string(values[0])
    if kind == "select_slider":
        label = element.format_func(element.value)  # the option's label, as the front end writes it
        labels = list(proto.options)
        return None if label in labels and [labels.index(label)] == list(proto.default) else label
    if kind in ("text_input", "text_area"):
        return None if element.value == proto.default else element.value
    return None


def address_of(at) -> dict:
    """The query params a browser's address bar holds after this run."""
    link = dict(at.query_params)
    for element in bound_widgets(at):
        key, value = element.proto.query_param_key, written_value(element)
        if value is None:
            link.pop(key, None)
        else:
            link[key] = value
    return link


def drawn(at) -> dict:
    """What a page shows, to compare two runs: every keyed widget's value, the heatmaps, the math and the messages.
    (Captions and markdown are left out: some pages print measured times there.)"""
    return {
        "widgets": {e.key: repr(e.value) for e in _widgets(at) if e.key},
        "heatmaps": heatmap_payloads(at),
        "latex": [e.value for e in at.latex],
        "messages": [e.value for kind in ("error", "warning") for e in getattr(at, kind)],
        "titles": [e.value for kind in ("title", "header", "subheader") for e in getattr(at, kind)],
    }
