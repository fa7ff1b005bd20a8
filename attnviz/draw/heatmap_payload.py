"""The bytes a heatmap component draws: one payload = header + JSON block + the cells as integers.

Every matrix attnviz shows travels to the browser as this payload (ui/heatmap_widget.py mounts the canvas
component in attnviz/components/heatmap/, whose JS decodes it). Integers, not figure JSON: 12 heads of
32 tokens are 24 kB of uint16, and the browser paints them on a canvas in well under a millisecond.

Layout (little-endian):
    b"AVHM"  u8 version  u8 bytes-per-cell (1, 2 or 4; 0 = one bit)  u16 reserved  u32 JSON length  JSON (UTF-8,
    padded to 4), then panels × rows × cols cells, row-major: uint8, uint16 or float32, or bits (least significant
    first) where 1 = −inf and 0 = the panel's one finite value: a mask's M (0 and −∞) in an eighth of a byte.

Kinds of scale (SCALE_KINDS), one per kind of matrix: each matrix is drawn with the one that fits it.
    weights    softmax weights, 0..1: viridis over 0..1 (or 0..each panel's own max)   uint16 (uint8 when large)
    signed     any real matrix (scores, features, differences), −∞ allowed: diverging,
               centred at 0, −∞ grey                                                   float32 (bits: a lone value and −∞)
    magnitude  a matrix that is never negative (norms, |Δ|): sequential from 0 (white)
               to the largest value; a negative value is refused                       uint16 (uint8 when large)
    mask       a mask's M, 0 (may attend) and −∞ (masked), or a bool matrix (True =
               may attend): two colours, no scale                                      bits
Each payload carries its legend's words ("legend": ticks under the colour bar, none for a mask; named colour
swatches such as −∞ (masked); a title), so the browser only paints them and a test reads them here. It may also
carry what a screen reader names it by ("label", default its one title) and each panel's place in the model
("panel_names", e.g. "layer 3, head 1"), which the browser adds to every cell it reads out
(attnviz/components/heatmap/access.js); without them a panel's title is read for it.

Cell codes, with TOP = 255 (uint8) or 65535 (uint16):
    weights  w in [0, 1]      -> round(w · (TOP − 1)); TOP is never used          |error| ≤ 0.5 / (TOP − 1)
    others   v in [lo, hi]    -> round((v − lo) / (hi − lo) · (TOP − 1)); −inf -> TOP   |error| ≤ step / 2
    float32  (signed, the default: scores, features and differences are small matrices whose exact values
             the hover and the tests read) the value itself, −inf as −inf.
lo, hi are each panel's finite min and max (in the JSON), so the hover shows true values; the colour
range is separate ("ranges"): 0..1 for weights (or each panel's own max, per_head_scale), ±limit centred at 0
for signed matrices, 0..limit for magnitudes, [0, 0] for a mask (its one finite value). Thumbnails (a model
view's 72 small panels, read by their colours) travel as uint8.
"""

from __future__ import annotations

import json
import struct

import numpy as np

from attnviz.errors import AttnvizError

MAGIC = b"AVHM"
VERSION = 1
HEADER = struct.Struct("<4sBBHI")  # magic, version, bytes per cell, reserved, JSON length
SCALE_KINDS = ("weights", "signed", "magnitude", "mask")  # the kinds of colour scale; see the module text
UINT8_ABOVE = 2_000_000  # more cells than this travel as uint8 (half the bytes, 2 decimals in hover)


BITS = 0  # the bytes-per-cell code of a payload whose cells are single bits


def top_code(bytes_per_cell: int) -> int:
    return 255 if bytes_per_cell in (BITS, 1) else 65535


def as_panels(matrices) -> np.ndarray:
    """One matrix (rows, cols) or several of one shape (panels, rows, cols) -> float64 (panels, rows, cols); bool
    matrices (masks: True = may attend) stay bool, for the mask kind to read as such."""
    arrays = [np.asarray(m.detach().cpu() if hasattr(m, "detach") else m) for m in
              (matrices if isinstance(matrices, (list, tuple)) else [matrices])]
    if not all(a.dtype == np.bool_ for a in arrays):
        arrays = [a.astype(np.float64) for a in arrays]
    stack = np.stack(arrays) if len(arrays) > 1 else arrays[0]
    if stack.ndim == 2:
        stack = stack[None]  # (1, rows, cols)
    if stack.ndim != 3 or 0 in stack.shape:
        raise AttnvizError(f"A heatmap needs a non-empty (rows, cols) matrix; got shape {tuple(stack.shape)}.")
    return stack


def symmetric_limit(z: np.ndarray) -> float:
    """max |finite z| (1 when there is nothing finite or everything is 0): 0 sits mid-scale."""
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def mask_as_m(z: np.ndarray) -> np.ndarray:
    """A mask as the softmax's M: bool (True = may attend) -> 0 / −inf; an M (only 0 and −inf) as it is."""
    if z.dtype == np.bool_:
        return np.where(z, 0.0, -np.inf)
    odd = z[~((z == 0) | np.isneginf(z))]
    if odd.size:
        raise AttnvizError(f"A mask holds only 0 (may attend) and −∞ (masked), or True/False; this one holds "
                           f"{odd.flat[0]:g} too. Draw it with kind='signed'.")
    return z


def check_magnitude(z: np.ndarray) -> None:
    """A magnitude (a norm, an |x|) is never negative: a negative value means the matrix is not one."""
    negative = np.argwhere(z < 0)
    if negative.size:
        p, r, c = negative[0]
        raise AttnvizError(f"A magnitude matrix is never negative, but panel {p}, row {r}, column {c} holds "
                           f"{z[p, r, c]:g}. Draw it with kind='signed'.")


def auto_bytes_per_cell(z: np.ndarray, kind: str, thumbnails: bool = False) -> int:
    """Weights and magnitudes: uint16 (3 decimals in hover), uint8 for thumbnails or above UINT8_ABOVE cells. A mask:
    one bit a cell (BITS). Signed: float32, exact, except a matrix of one finite value and −∞ (a mask's M), exact in
    BITS too. At 512 tokens an M is 32 kB that way, against 262 kB in bytes: the Masks lab sends eight of them."""
    if kind in ("weights", "magnitude"):
        return 1 if thumbnails or z.size > UINT8_ABOVE else 2
    if kind == "mask":
        return BITS
    finite = z[np.isfinite(z)]
    if finite.size and finite.min() != finite.max():
        return 4
    return BITS if np.isfinite(z).sum() + np.isneginf(z).sum() == z.size else 1


def encode_cells(z: np.ndarray, kind: str, bytes_per_cell: int) -> tuple[np.ndarray, list[list[float]]]:
    """(panels, rows, cols) floats -> integer codes and each panel's [lo, hi] (see the module text).
    NaN never reaches the screen: it is drawn as 0."""
    top = top_code(bytes_per_cell)
    dtype = np.uint8 if bytes_per_cell in (BITS, 1) else np.uint16
    if kind == "weights":
        # a panel at a time, in place: at 512 tokens a layer is 3M cells, and each whole-layer float64 temporary
        # (25 MB) was fresh memory for the server to fault in, ~20 ms apiece; a panel's 2 MB is reused
        codes = np.empty(z.shape, dtype=dtype)
        for p, panel in enumerate(z):
            scaled = np.nan_to_num(panel, nan=0.0, posinf=1.0, neginf=0.0)
            np.clip(scaled, 0.0, 1.0, out=scaled)
            scaled *= top - 1
            codes[p] = np.rint(scaled, out=scaled)
        return codes, [[0.0, 1.0]] * z.shape[0]
    z = np.where(np.isnan(z), 0.0, z)
    if bytes_per_cell == 4:
        finite = z[np.isfinite(z)]
        hi = float(finite.max()) if finite.size else 0.0
        bounds = [[float(p[np.isfinite(p)].min()) if np.isfinite(p).any() else 0.0,
                   float(p[np.isfinite(p)].max()) if np.isfinite(p).any() else 0.0] for p in z]
        return np.where(np.isposinf(z), hi, z).astype(np.float32), bounds
    bounds, out = [], np.empty(z.shape, dtype=dtype)
    for p, panel in enumerate(z):
        finite = panel[np.isfinite(panel)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
        span = hi - lo if hi > lo else 1.0
        clipped = np.clip(np.nan_to_num(panel, posinf=hi, neginf=lo), lo, hi)  # +inf drawn as the largest value
        out[p] = np.where(np.isneginf(panel), top, np.rint((clipped - lo) / span * (top - 1)))
        bounds.append([lo, hi])
    return out, bounds


def largest(z: np.ndarray) -> float:
    """max finite z (1 when there is nothing finite or nothing above 0): the top of a scale that starts at 0."""
    finite = z[np.isfinite(z)]
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def colour_ranges(z: np.ndarray, kind: str, per_head_scale: bool, limit: float | None) -> list[list[float]]:
    """What each panel's colours span: weights 0..1 (or 0..its own max), signed ±limit centred at 0, magnitudes
    0..limit, a mask [0, 0] (its one finite value: two colours, no scale)."""
    if kind == "weights":
        if not per_head_scale:
            return [[0.0, 1.0]] * z.shape[0]
        return [[0.0, max(float(np.nan_to_num(p, neginf=0.0).max()), 1e-3)] for p in z]
    if kind == "mask":
        return [[0.0, 0.0]] * z.shape[0]
    if kind == "magnitude":
        if per_head_scale:
            return [[0.0, largest(p)] for p in z]
        return [[0.0, float(limit) if limit else largest(z)]] * z.shape[0]
    if per_head_scale:
        return [[-symmetric_limit(p), symmetric_limit(p)] for p in z]
    lim = float(limit) if limit else symmetric_limit(z)
    return [[-lim, lim]] * z.shape[0]


def tick_text(v: float) -> str:
    """A legend tick: 0.5, 1, −2.37, 1230 (3 significant digits, no exponent, "−" for minus)."""
    text = np.format_float_positional(float(f"{abs(v):.3g}"), trim="-")
    return ("−" if v < 0 and text != "0" else "") + text


MASKED_SWATCH = ["masked", "−∞ (masked)"]  # a swatch: the colour's name (the JS paints it) and its words


def legend_of(kind: str, ranges: list[list[float]], has_masked: bool) -> dict:
    """The words of a heatmap's legend: {"ticks": under the colour bar (none: no bar), "swatches": [[colour name,
    words]], "title"}. With one range for every panel the ticks are numbers, else the panels' own ("max")."""
    lo, hi = ranges[0]
    same = all(r == [lo, hi] for r in ranges)
    swatches = [MASKED_SWATCH] if has_masked else []
    if kind == "weights":
        return {"ticks": ["0", tick_text(hi / 2), tick_text(hi)] if same else ["0", "½ max", "max"], "swatches": [],
                "title": "weight after softmax" + ("" if same else ", each head's colours 0 … its own largest weight")}
    if kind == "signed":
        return {"ticks": [tick_text(lo), "0", tick_text(hi)] if same else ["−max", "0", "+max"], "swatches": swatches,
                "title": "value (blue < 0 < red)" if same else "value, each panel its own ±max"}
    if kind == "magnitude":
        return {"ticks": ["0", tick_text(hi / 2), tick_text(hi)] if same else ["0", "½ max", "max"], "swatches": [],
                "title": "value ≥ 0 (white = 0)" if same else "value ≥ 0, each panel 0 … its own largest"}
    return {"ticks": [], "swatches": [["may_attend", "0 (may attend)"], MASKED_SWATCH],
            "title": "M, added to the scores before softmax"}


def named_legend(legend: dict, value_name: tuple[str, str] | None) -> dict:
    """The legend with its title and the hover's word for a value ("hover"; the browser's default: "weight" for
    weights, "value" otherwise) replaced by what the matrix really holds."""
    if value_name is None:
        return legend
    title, hover = value_name
    return {**legend, "title": title, "hover": hover}


def heatmap_payload(matrices, row_labels: list[str], col_labels: list[str] | None = None, *, titles: list[str],
                    kind: str = "weights", columns: int = 1, per_head_scale: bool = False, limit: float | None = None,
                    x_title: str = "key (attended to)", y_title: str = "query (attending)",
                    show_values: bool | None = None, selectable: bool = False, selection: dict | None = None,
                    bytes_per_cell: int | None = None, thumbnails: bool = False, highlight: int | None = None,
                    name: str = "", value_name: tuple[str, str] | None = None,
                    axis_words: tuple[str, str] | None = None, panel_names: list[str] | None = None,
                    label: str | None = None, caption: str = "") -> bytes:
    """The payload for one heatmap (one matrix) or a grid of panels of one shape.

    kind: one of SCALE_KINDS (see the module text): the scale that fits the matrix. A magnitude with a negative
    value, or a mask with anything but 0 and −∞ (or True/False), is an AttnvizError.
    col_labels None: the row labels again (self-attention) for weights and masks, numbered columns otherwise.
    selection: a cell the server asks the browser to ring ({"panel", "row", "col"}), or None.
    thumbnails: many small panels (a model view): no token labels, hover only, uint8 weights.
    highlight: a panel the browser frames and titles in bold (the model view's enlarged head), or None.
    name: the page's key for it (the browser files its drawn data under this name, for tests).
    value_name: (legend title, hover word) for a matrix on a kind's scale that is not what the kind is named for:
    rollout shares drawn on the weights' 0..1 scale are no "weight after softmax". None: the kind's own words.
    axis_words: (row word, column word) the hover names a cell by ("layer", "head") where rows and columns are not
    query and key tokens. None: "query"/"key" for weights and masks, "row"/x_title otherwise.
    panel_names: where each panel sits in the model ("layer 3, head 1"), read out with each of its cells; None: a
    "layer L, head H" in the panel's title, else (several panels) the title itself.
    label: what a screen reader calls the whole heatmap ("layer 3: 12 heads"); None: its one title, or its panels.
    caption: the settings the matrices were computed with ("all-MiniLM-L6-v2, mask none, scores × 0.1768"), written
    under the legend of a downloaded PNG (which leaves the page's controls behind); "" for none.
    """
    if kind not in SCALE_KINDS:
        raise AttnvizError(f"kind must be one of {SCALE_KINDS}, not {kind!r}.")
    z = as_panels(matrices)
    z = mask_as_m(z) if kind == "mask" else z.astype(np.float64, copy=False)
    if kind == "magnitude":
        check_magnitude(z)
    panels, rows, cols = z.shape
    if len(titles) != panels:
        raise AttnvizError(f"{panels} panel(s) but {len(titles)} title(s).")
    if col_labels is None:
        query_by_key = kind in ("weights", "mask") and cols == len(row_labels)
        col_labels = list(row_labels) if query_by_key else [str(c) for c in range(cols)]
    if len(row_labels) != rows or len(col_labels) != cols:
        raise AttnvizError(f"Labels do not fit the matrix: {len(row_labels)} × {len(col_labels)} labels for "
                           f"{rows} × {cols} cells.")
    if panel_names is not None and len(panel_names) != panels:
        raise AttnvizError(f"{panels} panel(s) but {len(panel_names)} panel name(s).")
    if highlight is not None and not 0 <= highlight < panels:
        raise AttnvizError(f"There is no panel {highlight} to frame among {panels}.")
    if bytes_per_cell is None:
        bytes_per_cell = auto_bytes_per_cell(z, kind, thumbnails)
    if kind == "weights" and bytes_per_cell in (4, BITS):
        raise AttnvizError("Weights travel as uint8 or uint16 (bytes_per_cell 1 or 2).")
    if kind == "magnitude" and bytes_per_cell == BITS:
        raise AttnvizError("Magnitudes travel as uint8, uint16 or float32 (bytes_per_cell 1, 2 or 4).")
    if kind == "mask" and bytes_per_cell != BITS:
        raise AttnvizError("A mask travels as one bit a cell (bytes_per_cell BITS).")
    codes, bounds = encode_cells(z, kind, bytes_per_cell)
    ranges = colour_ranges(z, kind, per_head_scale, limit)
    meta = {
        "kind": kind, "panels": panels, "rows": rows, "cols": cols, "columns": max(1, min(columns, panels)),
        "titles": [str(t) for t in titles], "row_labels": [str(s) for s in row_labels],
        "col_labels": [str(s) for s in col_labels], "bounds": bounds,
        "ranges": ranges, "legend": named_legend(legend_of(kind, ranges, bool(np.isneginf(z).any())), value_name),
        "per_head_scale": bool(per_head_scale),
        "x_title": x_title, "y_title": y_title, "selectable": bool(selectable), "selection": selection,
        "show_values": (max(rows, cols) <= 16 and panels == 1) if show_values is None else bool(show_values),
        "thumbnails": bool(thumbnails), "highlight": None if highlight is None else int(highlight),
        "bytes_per_cell": bytes_per_cell, "name": name,
    }
    if caption:
        meta["caption"] = str(caption)
    if axis_words is not None:
        meta["axis_words"] = [str(w) for w in axis_words]
    if panel_names is not None:
        meta["panel_names"] = [str(n) for n in panel_names]
    if label:
        meta["label"] = str(label)
    block = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    block += b" " * (-(HEADER.size + len(block)) % 4)  # cells start on a 4-byte boundary
    if bytes_per_cell == BITS:  # 1 where masked (code TOP), least significant bit first
        if not np.isin(codes, (0, top_code(BITS))).all():
            raise AttnvizError("One bit a cell holds one finite value per panel and −∞, no more.")
        cells = np.packbits(codes.reshape(-1) == top_code(BITS), bitorder="little").tobytes()
    else:
        cells = codes.astype("<f4" if bytes_per_cell == 4 else f"<u{bytes_per_cell}").tobytes()
    return HEADER.pack(MAGIC, VERSION, bytes_per_cell, 0, len(block)) + block + cells


def decode_payload(payload: bytes) -> tuple[dict, np.ndarray]:
    """payload -> (its JSON block, the values as drawn (panels, rows, cols) float64, −inf where masked)."""
    magic, version, bpc, _, length = HEADER.unpack_from(payload)
    if magic != MAGIC or version != VERSION or bpc not in (BITS, 1, 2, 4):
        raise AttnvizError("Not an attnviz heatmap payload.")
    meta = json.loads(payload[HEADER.size:HEADER.size + length])
    shape = (meta["panels"], meta["rows"], meta["cols"])
    if bpc == BITS:
        bits = np.frombuffer(payload, dtype=np.uint8, offset=HEADER.size + length)
        masked = np.unpackbits(bits, count=int(np.prod(shape)), bitorder="little").reshape(shape)
        codes = masked.astype(np.float64) * top_code(BITS)
    else:
        cell_type = "<f4" if bpc == 4 else f"<u{bpc}"
        codes = np.frombuffer(payload, dtype=cell_type, offset=HEADER.size + length).reshape(shape).astype(np.float64)
    if bpc == 4:
        return meta, codes
    top = top_code(bpc)
    if meta["kind"] == "weights":
        return meta, codes / (top - 1)
    lo, hi = (np.array([b[k] for b in meta["bounds"]])[:, None, None] for k in (0, 1))
    values = lo + codes / (top - 1) * np.where(hi > lo, hi - lo, 1.0)
    return meta, np.where(codes == top, -np.inf, values)


def precision(meta_or_payload) -> float:
    """The largest |decoded − original| a payload allows (per panel for signed and magnitudes: the widest panel's)."""
    meta = decode_payload(meta_or_payload)[0] if isinstance(meta_or_payload, (bytes, bytearray)) else meta_or_payload
    bpc = meta.get("bytes_per_cell", 2)
    if bpc in (4, BITS):
        return 0.0  # float32: the float32 value itself; bits: one finite value and −∞, both exact
    step = 1.0 / (top_code(bpc) - 1)
    if meta["kind"] == "weights":
        return step / 2
    return max(max(hi - lo, 1.0 if hi == lo else 0.0) for lo, hi in meta["bounds"]) * step / 2
