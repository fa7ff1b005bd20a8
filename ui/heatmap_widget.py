"""The one way pages draw a matrix of attention (or any matrix of numbers) as a heatmap.

Every page calls `heatmap` / `heatmap_grid`; they mount the canvas component of
attnviz/components/heatmap (inline JS, no build step) with the bytes payload of attnviz.draw.heatmap_payload.
Tests read what was drawn through tests/apptest_helpers.drawn_heatmap, which decodes that payload.

kind:
    "weights"  softmax weights: one shared 0..1 colour scale, hover names query, key and weight
    "signed"   any signed matrix (scores, |Δ| differences, outputs): diverging scale centred at 0, −inf grey

selectable=True: a click on a cell selects it (ring drawn in the browser) and the call returns
{"panel", "row", "col"} (or None); on_select (no arguments) runs first, before the rerun, and can read
st.session_state[key]["selection"]. `selection` is the cell the page wants ringed (a restored link).

other_state: the same heatmap with a sidebar switch in its other state (OtherState). The browser then swaps to
it the moment that switch flips, before the rerun's payload arrives (attnviz.draw.heatmap_switch).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attnviz.components.heatmap import component_css, component_js
from attnviz.draw.head_grid import head_grid_payload
from attnviz.draw.heatmap_payload import SCALE_KINDS as KINDS
from attnviz.draw.heatmap_payload import as_panels, heatmap_payload
from attnviz.draw.heatmap_row import row_payload
from attnviz.draw.heatmap_switch import switch_payload
from ui import streamlit_private
from ui.memo import SharedCache
from ui.runs import run_key
from ui.shared_view import for_followers

NAME = "attnviz_heatmap"


_mount = None


def _component():
    """The mounting callable, registered again whenever this Streamlit runtime lacks it (AppTest makes a new
    runtime per test, while this module stays imported)."""
    global _mount
    if _mount is None or not streamlit_private.component_registered(NAME):
        _mount = st.components.v2.component(NAME, js=component_js(), css=component_css())
    return _mount


def clean_selection(value, panels: int, rows: int, cols: int) -> dict | None:
    """A selection as {"panel", "row", "col"} ints inside the grid, or None (garbage, or outside the grid)."""
    if not isinstance(value, dict):
        return None
    try:
        sel = {k: int(value[k]) for k in ("panel", "row", "col")}
    except (KeyError, TypeError, ValueError):
        return None
    if 0 <= sel["panel"] < panels and 0 <= sel["row"] < rows and 0 <= sel["col"] < cols:
        return sel
    return None


def _noop() -> None:
    pass


@dataclass(frozen=True)
class OtherState:
    """What a heatmap shows with a sidebar switch flipped."""
    control: str  # the switch's widget key
    shown: bool  # the switch's state now: the one the page draws
    data: object  # heatmap(): the matrix with the switch flipped; layer_grid(): the run with it flipped
    title: str | None = None  # heatmap(): its title with the switch flipped, where the title names the state
    caption: str = ""  # heatmap(): its settings with the switch flipped (a downloaded PNG's caption; "": none)


def with_other_state(payload_for, other_payload_for, other: OtherState | None):
    """payload_for(selection), extended with the switch's other state when there is one."""
    if other is None:
        return payload_for

    return lambda sel: switch_payload(other.control, other.shown, payload_for(sel), other_payload_for(sel))


def draw_payload(payload_for, *, key: str, panels: int, rows: int, cols: int, selectable: bool,
                 selection: dict | None, on_select=None) -> dict | None:
    """Mount the component with payload_for(selection to ring) and return the selection (when selectable).

    The payload carries a selection only when the page asserts one the browser did not click itself
    (a restored link, a clamp): a click, which the browser rings on its own, then leaves the payload
    byte-identical, and Streamlit's message cache serves it without resending the cells.
    Returned: a click newer than anything seen before wins; otherwise the page's `selection`, else the last click.
    """
    if not selectable:
        _component()(key=key, data=payload_for(selection), width="stretch", height="content")
        return None
    clicked = clean_selection((st.session_state.get(key) or {}).get("selection"), panels, rows, cols)
    asserted_key, seen_key = f"_avhm_asserted_{key}", f"_avhm_seen_{key}"
    if selection is not None and selection != clicked:
        st.session_state[asserted_key] = selection
    _component()(key=key, data=payload_for(st.session_state.get(asserted_key)), width="stretch", height="content",
                 on_selection_change=on_select or _noop)
    new_click = clicked is not None and clicked != st.session_state.get(seen_key)
    st.session_state[seen_key] = clicked
    if new_click or selection is None:
        return clicked
    return clean_selection(selection, panels, rows, cols)


def heatmap(matrix, row_labels: list[str], col_labels: list[str] | None = None, *, key: str, title: str = "",
            kind: str = "weights", x_title: str = "key (attended to)", show_values: bool | None = None,
            limit: float | None = None, selectable: bool = False, per_head_scale: bool = False,
            selection: dict | None = None, on_select=None, bytes_per_cell: int | None = None,
            other_state: OtherState | None = None, value_name: tuple[str, str] | None = None,
            y_title: str | None = None, axis_words: tuple[str, str] | None = None, caption: str = "") -> dict | None:
    """One (rows, cols) matrix. col_labels None = the same tokens as the rows (self-attention);
    for a signed matrix None means numbered feature columns. limit: signed colour range ±limit.
    bytes_per_cell: 1 or 2 for weights (see attnviz.draw.heatmap_payload); None = chosen from the matrix.
    value_name: (legend title, hover word) for a matrix drawn on a kind's scale that it is not (rollout on 0..1).
    y_title, axis_words: the rows' title and the hover's (row, column) words, for a matrix whose rows and columns
    are not query and key tokens (a layers × heads map of weights). None: the kind's own. caption: the settings, under
    a downloaded PNG's legend (settings_caption)."""
    selectable = selectable and not for_followers()  # a view drawn for a room's followers takes no click
    payload_for, rows, cols = _heatmap_payload_for(
        matrix, row_labels, col_labels, key=key, title=title, kind=kind, x_title=x_title, show_values=show_values,
        limit=limit, selectable=selectable, per_head_scale=per_head_scale, bytes_per_cell=bytes_per_cell,
        other_state=other_state, value_name=value_name, y_title=y_title, axis_words=axis_words, caption=caption)
    return draw_payload(payload_for, key=key, panels=1, rows=rows, cols=cols, selectable=selectable,
                        selection=selection, on_select=on_select)


def heatmap_bytes(matrix, row_labels: list[str], col_labels: list[str] | None = None, *, key: str, **options) -> bytes:
    """The payload heatmap() draws with these arguments (not selectable), to draw in a heatmap_row under `key`."""
    return _heatmap_payload_for(matrix, row_labels, col_labels, key=key, **options)[0](None)


def heatmap_row(key: str, payloads: list[bytes]) -> None:
    """Heatmaps (heatmap_bytes) side by side in equal columns, as one component: one element of the page instead
    of st.columns and one per heatmap (attnviz.draw.heatmap_row). Each keeps the key it was made with."""
    _component()(key=key, data=row_payload(payloads), width="stretch", height="content")


def _heatmap_payload_for(matrix, row_labels, col_labels, *, key: str, title: str = "", kind: str = "weights",
                         x_title: str = "key (attended to)", show_values: bool | None = None, limit: float | None = None,
                         selectable: bool = False, per_head_scale: bool = False, bytes_per_cell: int | None = None,
                         other_state: OtherState | None = None, value_name: tuple[str, str] | None = None,
                         y_title: str | None = None, axis_words: tuple[str, str] | None = None, caption: str = ""):
    """heatmap()'s payload as a function of the cell to ring, and the matrix's rows and cols."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    z = as_panels(matrix)
    _, rows, cols = z.shape
    if kind == "signed" and col_labels is None:
        x_title = x_title if x_title != "key (attended to)" else "feature"

    def payload_of(cells, title, caption):
        return lambda sel: heatmap_payload(
            cells, row_labels, col_labels, titles=[title], kind=kind, limit=limit, x_title=x_title,
            y_title=y_title or ("query (attending)" if kind == "weights" else "row"), show_values=show_values,
            selectable=selectable, selection=sel, per_head_scale=per_head_scale, bytes_per_cell=bytes_per_cell, name=key,
            value_name=value_name, axis_words=axis_words, caption=caption)

    payload_for = with_other_state(
        payload_of(z, title, caption),
        other_state and payload_of(as_panels(other_state.data), other_state.title or title, other_state.caption),
        other_state)
    return payload_for, rows, cols


def heatmap_grid(matrices, row_labels: list[str], col_labels: list[str] | None = None, *, key: str,
                 titles: list[str], kind: str = "weights", columns: int = 3, selectable: bool = False,
                 per_head_scale: bool = False, selection: dict | None = None, thumbnails: bool | None = None,
                 highlight: int | None = None, on_select=None, panel_names: list[str] | None = None,
                 label: str | None = None) -> dict | None:
    """Several matrices of one shape side by side (e.g. every head of a layer), each with its title, on one
    canvas. thumbnails (default: more than 24 panels, e.g. a model view's 6 × 12): no token labels, hover only;
    a click there frames the clicked panel at once. highlight: the panel framed (and its title bold), or None.
    panel_names, label: what a screen reader hears (attnviz.draw.heatmap_payload)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    selectable = selectable and not for_followers()  # a view drawn for a room's followers takes no click
    z = as_panels(list(matrices))
    panels, rows, cols = z.shape
    thumbs = panels > 24 if thumbnails is None else thumbnails
    return draw_payload(
        lambda sel: heatmap_payload(z, row_labels, col_labels, titles=list(titles), kind=kind, columns=columns,
                                    per_head_scale=per_head_scale, selectable=selectable, selection=sel,
                                    thumbnails=thumbs, highlight=highlight, show_values=False, name=key,
                                    panel_names=panel_names, label=label),
        key=key, panels=panels, rows=rows, cols=cols, selectable=selectable, selection=selection, on_select=on_select)


GRID_PAYLOADS = SharedCache(max_entries=24)


def settings_caption(view, scale: float) -> str:
    """What a view's weights were computed with, for a file that leaves the page's controls behind (a PNG's caption,
    a CSV's corner): the model, the mask and the factor the scores were multiplied by."""
    return f"{view.model.name}, mask {view.mask_spec}, scores × {scale:.4g}"


def layer_grid_payload(run_key: tuple, layer: int, heads: tuple, per_head_scale: bool, selection: dict | None,
                       key: str, weights, labels: list[str], columns: int = 3, selectable: bool = True,
                       caption: str = "") -> bytes:
    """Every chosen head of one layer of one run, as one payload: cached per (run, layer, heads, colours), so
    picking a cell, the enlarged head or a colour mode never rebuilds it, and a layer seen once is instant.
    The run is named by its key (ui.runs.run_key); weights (n_heads, n, n) and labels are that run's layer, not
    part of the key (hashing 12 × 512² floats on every rerun would cost more than it saves)."""
    def make() -> bytes:
        return head_grid_payload(weights, labels, heads, layer=layer, name=key, per_head_scale=per_head_scale,
                                 selection=selection, columns=columns, selectable=selectable, caption=caption)

    ring = None if selection is None else tuple(sorted(selection.items()))
    return GRID_PAYLOADS.get((run_key, layer, tuple(heads), bool(per_head_scale), ring, key, columns, selectable),
                             make)


def layer_grid(res, view, layer: int, heads: list[int], *, key: str, per_head_scale: bool = False,
               selection: dict | None = None, on_select=None, columns: int = 3,
               other_state: OtherState | None = None) -> dict | None:
    """heatmap_grid for the heads of one layer of `res`, the run of `view` (a ui.state.ViewState), with the payload
    cached (see above). other_state.data: the run with the switch flipped."""
    n = len(res.labels)
    selectable = not for_followers()  # a view drawn for a room's followers takes no click

    def payload_of(run):
        key_of_run = run_key(view.model_spec, view.device, view.text, view.mask_spec, run.scale)
        return lambda sel: layer_grid_payload(key_of_run, layer, tuple(heads), per_head_scale, sel, key,
                                              run.attentions[layer], list(run.labels), columns, selectable,
                                              settings_caption(view, run.scale))

    return draw_payload(
        with_other_state(payload_of(res), other_state and payload_of(other_state.data), other_state),
        key=key, panels=len(heads), rows=n, cols=n, selectable=selectable, selection=selection, on_select=on_select)
