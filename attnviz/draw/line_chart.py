"""Lines on linear or log-log axes, as an inline SVG with an HTML legend: the Masks lab's cost chart.

An SVG, not a chart library: the page would otherwise load plotly.js (4.7 MB) on every first load only for
this chart. Hover: each line names itself, and the marked n (the user's text) has a dot per line with its value.
Every line carries its values in data-y, for tests (`chart_lines`).
"""

from __future__ import annotations

import html
import math
import re

import numpy as np

from attnviz.draw.palette import LINES as COLOURS  # told apart without colour vision too (tests/draw/test_palette.py)

# each line's dash pattern (SVG stroke-dasharray), in the order of COLOURS: a line is told by its pattern as well as
# its colour, in the plot and in the legend's sample beside its name
DASHES = ["", "8 4", "2 3", "10 3 2 3", "4 4", "14 4 4 4", "1 5"]
WIDTH, HEIGHT = 640, 340  # the drawing's own units; it is scaled to its column (at most MAX_PX wide)
MAX_PX = 760
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 24, 46  # room for tick labels and axis titles

CSS = """<style>
.av-line { max-width: MAX_PXpx; margin: 0.25rem 0 0.75rem; }
.av-line svg { width: 100%; height: auto; font-family: inherit; }
.av-line-legend { display: flex; flex-wrap: wrap; gap: 0.2em 1em; font-size: 0.85em; margin-top: 0.3rem; }
.av-line-legend span { display: inline-flex; align-items: center; gap: 0.35em; white-space: nowrap; }
.av-line-legend .av-line-sample { width: 2.2em; height: 0.5em; }
</style>""".replace("MAX_PX", str(MAX_PX))


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 × 10^k apart) covering [lo, hi], about `count` of them."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = max(m * power for m in (1, 2, 5) if m * power <= raw)  # the largest round step giving ≥ count ticks
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def decade_ticks(lo: float, hi: float) -> list[float]:
    """10^k for every whole k in [log10 lo, log10 hi] (the log axes' ticks)."""
    return [10.0 ** k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]


def tick_label(v: float) -> str:
    """12, 1,500, 262k, 1.5M: short enough for the axis."""
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:,.0f}" if v == int(v) else f"{v:g}"


def axes_svg(px, py, x_ticks: list[float], y_ticks: list[float], x_title: str, y_title: str) -> list[str]:
    """The plot's frame, grid lines, tick labels and axis titles; px, py map values to drawing units. The words
    outside the frame are in the page's text colour (currentColor): readable on a dark theme as on a light one."""
    esc = html.escape
    middle = (TOP + HEIGHT - BOTTOM) / 2
    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
             'fill="#fafafa" stroke="#ddd"/>']
    for t in x_ticks:
        parts.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="#e6e6e6"/>'
                     f'<text x="{px(t):.1f}" y="{HEIGHT - BOTTOM + 16}" font-size="13" text-anchor="middle" '
                     f'fill="currentColor">{tick_label(t)}</text>')
    for t in y_ticks:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#e6e6e6"/>'
                     f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" font-size="13" text-anchor="end" fill="currentColor">'
                     f'{tick_label(t)}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 8}" font-size="14" text-anchor="middle" '
                 f'fill="currentColor">{esc(x_title)}</text><text x="14" y="{middle}" font-size="14" '
                 f'text-anchor="middle" fill="currentColor" transform="rotate(-90 14 {middle})">{esc(y_title)}</text>')
    return parts


def line_chart_svg(x, lines: dict[str, np.ndarray], *, x_title: str, y_title: str, log_axes: bool = False,
                   marker_x: float | None = None, marker_label: str = "", label: str = "") -> str:
    """One polyline per entry of `lines` (name -> y at each x), x from its smallest to its largest value (and
    the marker), y from 0 (linear) or the smallest positive value (log) to the largest; each line in its own colour
    and dash pattern (COLOURS, DASHES), so two lines that run together stay apart. marker_x: a dashed line
    and, where it is one of x, a dot per line holding that line's value there. Names are escaped."""
    x = np.asarray(x, dtype=np.float64)
    ys = {name: np.asarray(y, dtype=np.float64) for name, y in lines.items()}
    every = np.concatenate([y[np.isfinite(y)] for y in ys.values()] or [np.zeros(1)])
    x_lo, x_hi = float(x.min()), float(x.max())
    if marker_x is not None:
        x_lo, x_hi = min(x_lo, marker_x), max(x_hi, marker_x)
    if log_axes:
        positive = every[every > 0]
        y_lo, y_hi = (float(positive.min()), float(positive.max())) if positive.size else (1.0, 10.0)
        x_lo = max(x_lo, 1e-9)
    else:
        y_lo, y_hi = 0.0, float(every.max()) if every.size and every.max() > 0 else 1.0
    fx, fy = (math.log10, math.log10) if log_axes else (float, float)
    x0, x1, y0, y1 = fx(x_lo), fx(x_hi), fy(y_lo), fy(y_hi)
    x_span, y_span = (x1 - x0) or 1.0, (y1 - y0) or 1.0

    def px(v: float) -> float:  # x value -> drawing units
        return LEFT + (fx(v) - x0) / x_span * (WIDTH - LEFT - RIGHT)

    def py(v: float) -> float:  # y value -> drawing units (up is smaller)
        return HEIGHT - BOTTOM - (fy(v) - y0) / y_span * (HEIGHT - TOP - BOTTOM)

    parts = axes_svg(px, py, decade_ticks(x_lo, x_hi) if log_axes else nice_ticks(x_lo, x_hi),
                     decade_ticks(y_lo, y_hi) if log_axes else nice_ticks(y_lo, y_hi), x_title, y_title)
    esc = html.escape
    colours = {name: COLOURS[k % len(COLOURS)] for k, name in enumerate(ys)}
    legend = []
    for k, (name, y) in enumerate(ys.items()):
        colour = colours[name]
        keep = np.isfinite(y) & ((x > 0) & (y > 0) if log_axes else True)  # a log axis has no place for 0
        points = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[keep], y[keep], strict=True))
        pattern = DASHES[k % len(DASHES)]
        dash = f' stroke-dasharray="{pattern}"' if pattern else ""
        values = ",".join(f"{v:.9g}" for v in y)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash} '
                     f'data-name="{esc(name)}" data-y="{values}"><title>{esc(name)}</title></polyline>')
        legend.append(f'<span><svg class="av-line-sample" viewBox="0 0 28 6" aria-hidden="true"><line x1="0" x2="28" '
                      f'y1="3" y2="3" stroke="{colour}" stroke-width="3"{dash}/></svg>{esc(name)}</span>')
    if marker_x is not None:
        mx = px(marker_x)
        parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="#777" '
                     f'stroke-dasharray="3 3"/>')
        # the label beside the line, on the side with more room: never over the axis's tick labels
        right = mx < (LEFT + WIDTH - RIGHT) / 2
        parts.append(f'<text x="{mx + 5 if right else mx - 5:.1f}" y="{TOP + 15}" font-size="13" '
                     f'text-anchor="{"start" if right else "end"}" fill="#444">{esc(marker_label)}</text>')
        hits = np.flatnonzero(x == marker_x)  # dots only where a value was computed: never an interpolated one
        ats = {name: float(y[hits[0]]) for name, y in ys.items()} if hits.size else {}
        for name, at in ats.items():  # a dot per line, its value on hover
            if np.isfinite(at) and (at > 0 or not log_axes):
                parts.append(f'<circle cx="{mx:.1f}" cy="{py(at):.1f}" r="4" fill="{colours[name]}">'
                             f'<title>{esc(name)}: {esc(x_title)} = {marker_x:g}, {esc(y_title)} = {at:,.0f}</title>'
                             '</circle>')
    return (f'{CSS}<div class="av-line"><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{esc(label or y_title)}">{"".join(parts)}</svg>'
            f'<div class="av-line-legend">{"".join(legend)}</div></div>')


def chart_lines(markup: str) -> dict[str, np.ndarray]:
    """name -> the values of each line a line_chart_svg drew (for tests)."""
    return {html.unescape(name): np.array([float(v) for v in values.split(",")])
            for name, values in re.findall(r'data-name="([^"]*)" data-y="([^"]*)"', markup)}
