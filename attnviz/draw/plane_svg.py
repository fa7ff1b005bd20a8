"""Queries and keys as points in a plane, as a static inline SVG (a lecture's handout: it prints as it shows): queries
are circles, keys diamonds, each labelled with its token; a grey line joins each strong pair (darker and thicker for
more weight), the highlighted query's lines red. Both axes at one scale, as on the Query–key space page: a distance in
the plane is the same either way.
"""

from __future__ import annotations

import html

import numpy as np

from attnviz.draw.palette import KEY, QUERY, ROW

SIZE, PAD = 520, 34  # the plot's square side and the margin around it, in drawing units


def plane_svg(q_xy, k_xy, labels: list[str], pairs: list[tuple[int, int, float]], *, title: str, x_title: str,
              y_title: str, selected: int | None = None) -> str:
    """q_xy, k_xy: (n, 2) each, a query's and a key's place; pairs: (query, key, weight) to join with a line."""
    q, k = np.asarray(q_xy, dtype=np.float64), np.asarray(k_xy, dtype=np.float64)  # (n, 2) each
    both = np.concatenate([q, k])  # (2n, 2)
    centre = (both.max(axis=0) + both.min(axis=0)) / 2
    half = float((both.max(axis=0) - both.min(axis=0)).max()) / 2 or 1.0  # one scale for both axes
    top = 30

    def at(xy) -> tuple[float, float]:  # a point -> drawing units (up is smaller)
        return (PAD + (xy[0] - centre[0] + half) / (2 * half) * (SIZE - 2 * PAD),
                top + PAD + (centre[1] + half - xy[1]) / (2 * half) * (SIZE - 2 * PAD))

    esc = html.escape
    height = top + SIZE + 30
    parts = [f'<svg viewBox="0 0 {SIZE} {height}" width="{SIZE}" height="{height}" role="img" '
             f'aria-label="{esc(title)}" class="av-svg-plane" font-size="12" font-family="sans-serif">',
             f"<title>{esc(title)}</title>", f'<text x="4" y="16" font-weight="600">{esc(title)}</text>',
             f'<rect x="0.5" y="{top + 0.5}" width="{SIZE - 1}" height="{SIZE - 1}" fill="#fafafa" stroke="#ddd"/>']
    for i, j, w in pairs:
        (x0, y0), (x1, y1) = at(q[i]), at(k[j])
        colour = ROW if i == selected else f"rgba(90, 90, 90, {0.2 + 0.6 * w:.2f})"
        parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="{colour}" '
                     f'stroke-width="{1 + 4 * w:.1f}"><title>{esc(labels[i])} → {esc(labels[j])}: {w:.2f}</title>'
                     "</line>")
    for role, xy, colour in (("query", q, QUERY), ("key", k, KEY)):
        for i, point in enumerate(xy):
            x, y = at(point)
            rim = f' stroke="{ROW}" stroke-width="3"' if role == "query" and i == selected else ' stroke="#fff"'
            shape = (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{colour}"{rim}>' if role == "query" else
                     f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="{colour}"{rim} '
                     f'transform="rotate(45 {x:.1f} {y:.1f})">')
            parts.append(f"{shape}<title>{role} {esc(labels[i])} ({i})</title></{'circle' if role == 'query' else 'rect'}>"
                         f'<text x="{x:.1f}" y="{y - 9:.1f}" text-anchor="middle" fill="{colour}">{esc(labels[i])}</text>')
    parts.append(f'<text x="{SIZE / 2}" y="{height - 8}" text-anchor="middle" fill="#555">{esc(x_title)} →</text>'
                 f'<text x="12" y="{top + SIZE / 2}" text-anchor="middle" fill="#555" '
                 f'transform="rotate(-90 12 {top + SIZE / 2})">{esc(y_title)} →</text></svg>')
    legend = (f'<span style="color:{QUERY}">● queries (the looking tokens)</span> · '
              f'<span style="color:{KEY}">◆ keys (the looked-at tokens)</span>')
    return "".join(parts) + f'<div class="av-plane-legend">{legend}</div>'
