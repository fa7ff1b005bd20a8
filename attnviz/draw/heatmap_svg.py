"""A weight matrix as a static inline SVG: a figure that prints as it shows and opens from a disk (a lecture's
handout), where the app's heatmap is a canvas drawn by its script. Rows are queries, columns keys; a weight is
white at 0 and dark blue at the matrix's largest (the app's weights scale); each cell prints its value when the
matrix is small enough to read them; a row (a question's query) may be ringed.

kind "signed" draws any other matrix (scores, Q, K, V, a difference) as the app's signed scale does: blue below 0,
white at 0, red above, ±limit at the ends; a masked score (−∞) is grey and prints −∞.
"""

from __future__ import annotations

import html

import numpy as np

from attnviz.draw.palette import MASKED, SIGNED

CELL_MAX, CELL_MIN = 34.0, 9.0  # a cell's side in the drawing's units
WIDTH = 640  # the drawing's width at most; it scales to its column
LABEL = 7.2  # drawing units per character of a label (the SVG's font is 12 units)
VALUES_UP_TO = 18  # columns: beyond this the cells are too small for their numbers


def colour(w: float) -> str:
    """White (0) to the app's dark blue (1)."""
    w = min(max(w, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * w) for c in (8, 48, 107))
    return f"#{r:02x}{g:02x}{b:02x}"


def signed_colour(v: float) -> str:
    """-1 .. 1 on the app's signed scale (palette.SIGNED: blue, white at 0, red), interpolated between its stops."""
    at = (min(max(v, -1.0), 1.0) + 1) / 2 * (len(SIGNED) - 1)
    low = min(int(at), len(SIGNED) - 2)
    a, b = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in SIGNED[low:low + 2])
    r, g, bl = (round(x + (y - x) * (at - low)) for x, y in zip(a, b, strict=True))
    return f"#{r:02x}{g:02x}{bl:02x}"


def heatmap_svg(weights, rows: list[str], columns: list[str], *, title: str, ring_row: int | None = None,
                ring_cell: tuple[int, int] | None = None, x_title: str = "key", y_title: str = "query",
                kind: str = "weights", limit: float | None = None) -> str:
    """weights: (n_rows, n_columns) in 0..1 (kind "weights"), or any numbers (kind "signed", coloured ±limit, by
    default the largest finite |value|). The SVG, with its title and the matrix in words for a screen reader."""
    w = np.asarray(weights, dtype=np.float64)  # (n_rows, n_columns)
    finite = np.abs(w[np.isfinite(w)])
    reach = limit or (float(finite.max()) if finite.size and finite.max() > 0 else 1.0)  # signed: ±reach
    n_rows, n_cols = w.shape
    top_label = max((len(c) for c in columns), default=1) * LABEL * 0.75 + 10  # the column labels, slanted
    # the row labels, and the y title above them (left of the slanted column labels)
    left = max(max((len(r) for r in rows), default=1) * LABEL, (len(y_title) + 2) * LABEL) + 10
    cell = max(CELL_MIN, min(CELL_MAX, (WIDTH - left - 10) / max(n_cols, 1)))
    top = 28 + top_label
    width = max(left + cell * n_cols + 10, 10 + len(title) * LABEL)  # the title whole above a narrow grid
    height = top + cell * n_rows + 24
    largest = float(w.max()) if w.size and w.max() > 0 else 1.0
    esc = html.escape
    # drawn at its own size (a unit is a CSS pixel), never wider than its column: a small grid stays small
    parts = [f'<svg viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
             f'height="{height:.0f}" role="img" '
             f'aria-label="{esc(title)}" class="av-svg-heatmap" font-size="12" font-family="sans-serif">',
             f"<title>{esc(title)}</title>",
             f'<text x="4" y="16" font-weight="600">{esc(title)}</text>']
    small = f' font-size="{cell * 0.85:.1f}"' if cell < 13 else ""  # labels of narrow cells fit their cell
    for j, label in enumerate(columns):
        x = left + cell * (j + 0.5)
        parts.append(f'<text x="{x:.1f}" y="{top - 6:.1f}" transform="rotate(-50 {x:.1f} {top - 6:.1f})"{small}>'
                     f"{esc(label)}</text>")
    for i, label in enumerate(rows):
        y = top + cell * (i + 0.5) + 4
        parts.append(f'<text x="{left - 6:.1f}" y="{y:.1f}" text-anchor="end"{small}>{esc(label)}</text>')
        for j in range(n_cols):
            value = float(w[i, j])
            if kind == "signed":
                masked = not np.isfinite(value)
                fill = MASKED if masked else signed_colour(value / reach)
                dark = not masked and abs(value) / reach > 0.6  # −∞ prints dark on its grey
                said = "−∞" if masked else f"{value:.2f}"
            else:
                shade = value / largest
                fill, dark, said = colour(shade), shade > 0.55, f"{value:.2f}"
            x0, y0 = left + cell * j, top + cell * i
            parts.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                         f'fill="{fill}" stroke="#fff" stroke-width="0.5"><title>{esc(rows[i])} → '
                         f"{esc(columns[j])}: {'−∞' if not np.isfinite(value) else f'{value:.3f}'}</title></rect>")
            if n_cols <= VALUES_UP_TO:
                ink = "#fff" if dark else "#222"
                parts.append(f'<text x="{x0 + cell / 2:.1f}" y="{y0 + cell / 2 + 3.5:.1f}" text-anchor="middle" '
                             f'font-size="{min(10.0, cell / 3):.1f}" fill="{ink}">{said}</text>')
    if ring_row is not None:
        parts.append(f'<rect x="{left - 1:.1f}" y="{top + cell * ring_row - 1:.1f}" width="{cell * n_cols + 2:.1f}" '
                     f'height="{cell + 2:.1f}" fill="none" stroke="#d62728" stroke-width="2.5"/>')
    if ring_cell is not None:
        i, j = ring_cell
        parts.append(f'<rect x="{left + cell * j:.1f}" y="{top + cell * i:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                     'fill="none" stroke="#ff7f0e" stroke-width="3"/>')
    parts.append(f'<text x="{left + cell * n_cols / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" '
                 f'fill="#555">{esc(x_title)} →</text>')
    parts.append(f'<text x="4" y="{top - 6:.1f}" fill="#555">{esc(y_title)} ↓</text>')
    parts.append("</svg>")
    return "".join(parts)
