"""A small grid of numbers as an HTML table whose cells are coloured by value, each printed in its cell:
the Model view's layer × head map of one head statistic.

Plain HTML and CSS rather than a chart: a page that loads plotly.js only for a 6 × 12 map pays for that
4.7 MB script on every first load (Model view at 512 tokens: 2.05 → 1.89 s without it, alternating
loads; see benchmarks/RESULTS.md). Cell text is real text: sharp on a projector, selectable, read by screen readers.
"""

from __future__ import annotations

import html
import re

import numpy as np

from attnviz.draw.palette import NO_VALUE, VALUE_MAP

# plotly's Cividis, ten stops from dark blue to yellow: readable with most colour-vision deficiencies; a cell with no
# finite value is NO_VALUE grey, printed as "–" (never NaN on screen)
CIVIDIS = VALUE_MAP

CSS = """<style>
.av-map { margin: 0.25rem 0 1rem; }
.av-map-title { font-weight: 600; margin-bottom: 0.35rem; }
.av-map-scroll { overflow-x: auto; max-width: 100%; }
.av-map table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
.av-map th { font-weight: 500; font-size: 0.8em; padding: 0.2em 0.35em; text-align: center; white-space: nowrap; }
.av-map td { text-align: center; font-size: 0.85em; padding: 0.35em 0.2em; min-width: 2.8em; border: 1px solid #fff; }
.av-map-legend { display: flex; align-items: center; gap: 0.5em; flex-wrap: wrap; font-size: 0.8em; margin-top: 0.4rem; }
.av-map-bar { display: inline-block; width: min(180px, 40%); height: 0.8em; border-radius: 2px; }
</style>"""


def rgb_of(colour: str) -> np.ndarray:
    """#rrggbb -> [r, g, b] (0..255)."""
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])


def colour_at(t: float) -> str:
    """The Cividis colour at t in [0, 1] (clipped), as #rrggbb, linearly between the stops."""
    t = min(max(float(t), 0.0), 1.0) * (len(CIVIDIS) - 1)
    k = min(int(t), len(CIVIDIS) - 2)
    f = t - k
    a, b = (rgb_of(h) for h in CIVIDIS[k:k + 2])
    return "#" + "".join(f"{round(v):02x}" for v in a * (1 - f) + b * f)


def text_colour(background: str) -> str:
    """Dark text on a light cell, white on a dark one (relative luminance of #rrggbb)."""
    return "#111" if rgb_of(background) @ np.array([0.2126, 0.7152, 0.0722]) > 140 else "#fff"


def value_map_html(grid, row_labels: list[str], col_labels: list[str], *, title: str, row_name: str,
                   col_name: str, corner: str = "", digits: int = 2) -> str:
    """grid (rows, cols) -> an HTML table (with its CSS) coloured from the grid's smallest finite value (dark) to
    its largest (yellow), each cell printed to `digits` decimals; hover names row, column and the value to 3.
    Every cell carries its value in data-value, for tests. All text is escaped."""
    z = np.asarray(grid, dtype=np.float64)  # (rows, cols)
    finite = z[np.isfinite(z)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    span = hi - lo if hi > lo else 1.0
    esc = html.escape
    head = "".join(f'<th scope="col">{esc(str(c))}</th>' for c in col_labels)
    body = []
    for r, label in enumerate(row_labels):
        cells = []
        for c, col in enumerate(col_labels):
            v = z[r, c]
            tip = f"{row_name} {label}, {col_name} {col} · {title}: " + (f"{v:.3f}" if np.isfinite(v) else "no value")
            background = colour_at((v - lo) / span) if np.isfinite(v) else NO_VALUE
            shown = f"{v:.{digits}f}".replace("-", "−") if np.isfinite(v) else "–"
            cells.append(f'<td style="background:{background};color:{text_colour(background)}" title="{esc(tip)}" '
                         f'data-value="{v:.9g}">{shown}</td>')
        body.append(f'<tr><th scope="row">{esc(str(label))}</th>{"".join(cells)}</tr>')
    gradient = ", ".join(CIVIDIS)
    return (f'{CSS}<div class="av-map"><div class="av-map-title">{esc(title)}</div>'
            # a box that scrolls sideways (a phone) takes the keyboard's focus, so arrow keys can scroll it (WCAG 2.1.1)
            f'<div class="av-map-scroll" tabindex="0" role="region" aria-label="{esc(title)}, a table that scrolls '
            f'sideways"><table aria-label="{esc(title)}"><thead><tr><th scope="col">{esc(corner)}</th>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            f'<div class="av-map-legend"><span>{lo:.{digits}f}</span>'
            f'<span class="av-map-bar" style="background:linear-gradient(to right, {gradient})"></span>'
            f'<span>{hi:.{digits}f}</span><span>colour: {esc(title)}, from this model\'s smallest value to its largest'
            f'</span></div></div>')


def map_values(markup: str) -> np.ndarray:
    """The values of a value_map_html table's cells, row by row (what a page drew, for tests): (rows · cols,)."""
    return np.array([float(v) for v in re.findall(r'data-value="([^"]*)"', markup)])
