"""The Transformer map as an inline SVG: the encoder and decoder stacks, each block a link to the page that teaches it.

An SVG written here, as attnviz/draw/line_chart.py's: no chart library, no request to another host, every word DOM
text that a test can read and a screen reader can say. The words, arrows and stack outlines outside the blocks are in
the page's text colour (currentColor), so the figure reads on a dark theme too; the blocks keep their own light fills
and dark words. Its size follows its column: at most the first screen's height on a
projector (the text stays about 20 px at 1024 × 768), and the phone's width on a phone (where the list of links
under it is the readable version).
"""

from __future__ import annotations

import html
from itertools import pairwise

from attnviz.lessons.transformer_map.blocks import BLOCKS, BLOCKS_BY_KEY, COL_W, DEC_X, DECODER_BOX, ENC_X, ENCODER_BOX

WIDTH, HEIGHT = 850, 630  # the drawing's units
FONT = 22  # block labels, in the drawing's units
COLOURS = {"attention": "#fdd9b5", "norm": "#fff1a8", "ffn": "#cde6fb", "embed": "#f6d3df", "output": "#ddd5f5"}

CSS = """<style>
.av-tmap { margin: 0.2rem 0 0.6rem; }
.av-tmap svg { display: block; width: 100%; height: auto; max-height: calc(100vh - 10.5rem); max-width: 1100px;
  font-family: inherit; }
.av-tmap a rect { transition: stroke 0.1s; }
.av-tmap a, .av-tmap a text { text-decoration: none; }
.av-tmap a:hover rect, .av-tmap a:focus rect { stroke: #ff4b4b; stroke-width: 3; }
.av-tmap a:hover text { fill: #b3001b; }
.av-tmap-list { columns: 2 22rem; column-gap: 2rem; padding-left: 1.2rem; margin: 0.4rem 0; }
.av-tmap-list li { break-inside: avoid; margin-bottom: 0.35rem; }
.av-tmap-list a { font-weight: 600; }
</style>"""


def centre(key: str) -> tuple[float, float]:
    b = BLOCKS_BY_KEY[key]
    return b.x + b.w / 2, b.y + b.h / 2


def arrow(points: list[tuple[float, float]], dashed: bool = False) -> str:
    """A polyline through the points with an arrowhead at its end."""
    path = " ".join(f"{x:.0f},{y:.0f}" for x, y in points)
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    return (f'<polyline points="{path}" fill="none" stroke="currentColor" stroke-width="2"{dash} '
            'marker-end="url(#av-tmap-head)"/>')


def up(lower: str, upper: str) -> str:
    """The data's path from one block to the block above it."""
    lo, hi = BLOCKS_BY_KEY[lower], BLOCKS_BY_KEY[upper]
    x = lo.x + lo.w / 2
    return arrow([(x, lo.y), (x, hi.y + hi.h)])


def residual(sub: str, norm: str, side: float) -> str:
    """A residual connection: from just below a sub-layer, around it on the left, into its Add & Norm."""
    s, n = BLOCKS_BY_KEY[sub], BLOCKS_BY_KEY[norm]
    x = s.x + s.w / 2
    start_y = s.y + s.h + 5
    return arrow([(x, start_y), (side, start_y), (side, n.y + n.h / 2), (n.x, n.y + n.h / 2)])


def block_svg(b, extra: tuple[tuple[str, str], ...] = ()) -> str:
    """A block: a rounded box and its label, inside a link to its page (extra: more of the link's parameters)."""
    esc = html.escape
    tip = esc(b.teaches)
    size = FONT if b.h >= 40 else FONT - 1
    return (f'<a href="{esc(b.link(extra))}" target="_self" data-block="{b.key}" aria-label="{esc(b.label)}: {tip}">'
            f'<title>{tip}</title>'
            f'<rect x="{b.x}" y="{b.y}" width="{b.w}" height="{b.h}" rx="7" fill="{COLOURS[b.kind]}" stroke="#444" '
            'stroke-width="1.5"/>'
            f'<text x="{b.x + b.w / 2}" y="{b.y + b.h / 2 + size * 0.36:.1f}" font-size="{size}" text-anchor="middle" '
            f'fill="#111">{esc(b.label)}</text></a>')


def map_svg(extra: tuple[tuple[str, str], ...] = ()) -> str:
    """The whole figure: both stacks, their residuals, the encoder's output into cross-attention, the output head
    (extra: parameters every block's link adds, a lecture's keys)."""
    # a group, not an img: an img's content is one picture to a screen reader, and its links could not be reached
    # (axe: nested-interactive); as a group each block is a link read by its name, the arrows' words as text
    parts = [f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="group" aria-label="The Transformer: encoder and decoder '
             'stacks; each block links to the page that teaches it" xmlns="http://www.w3.org/2000/svg">',
             '<defs><marker id="av-tmap-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>']
    for (x, y, w, h), name, n_at in ((ENCODER_BOX, "Encoder layer", (ENC_X - 10, "end")),
                                     (DECODER_BOX, "Decoder layer", (DEC_X + COL_W + 10, "start"))):
        parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="12" fill="currentColor" '
                     'fill-opacity="0.05" stroke="currentColor" stroke-opacity="0.5" stroke-width="1.5"/>')
        parts.append(f'<text x="{n_at[0]}" y="{y + h / 2 + 8}" font-size="{FONT + 2}" font-weight="bold" '
                     f'text-anchor="{n_at[1]}" fill="currentColor">N×</text>')
        parts.append(f'<text x="{x}" y="{y - 10}" font-size="{FONT - 2}" font-style="italic" fill="currentColor">{name}</text>')
    # the data's path, bottom to top
    for chain in (("enc_embed", "enc_pos", "enc_attn", "enc_norm1", "enc_ffn", "enc_norm2"),
                  ("dec_embed", "dec_pos", "dec_self", "dec_norm1", "dec_cross", "dec_norm2", "dec_ffn", "dec_norm3",
                   "out_linear", "out_softmax")):
        parts += [up(a, b) for a, b in pairwise(chain)]
    parts += [residual("enc_attn", "enc_norm1", ENC_X + 7), residual("enc_ffn", "enc_norm2", ENC_X + 7),
              residual("dec_self", "dec_norm1", DEC_X + 7), residual("dec_cross", "dec_norm2", DEC_X + 7),
              residual("dec_ffn", "dec_norm3", DEC_X + 7)]
    # the encoder's output: the keys and values of every decoder layer's cross-attention
    top, cross = BLOCKS_BY_KEY["enc_norm2"], BLOCKS_BY_KEY["dec_cross"]
    bend_x = (ENC_X + COL_W + DEC_X) / 2
    parts.append(arrow([(top.x + top.w / 2, top.y), (top.x + top.w / 2, top.y - 34), (bend_x, top.y - 34),
                        (bend_x, cross.y + cross.h / 2), (cross.x, cross.y + cross.h / 2)]))
    parts.append(f'<text x="{top.x + top.w / 2 + 10}" y="{top.y - 42}" font-size="{FONT - 3}" '
                 'fill="currentColor">keys, values</text>')
    soft = BLOCKS_BY_KEY["out_softmax"]
    parts.append(arrow([(soft.x + soft.w / 2, soft.y), (soft.x + soft.w / 2, soft.y - 24)]))
    parts.append(f'<text x="{soft.x + soft.w / 2}" y="{soft.y - 30}" font-size="{FONT - 2}" text-anchor="middle" '
                 'fill="currentColor">next-token probabilities</text>')
    for b, words in ((BLOCKS_BY_KEY["enc_embed"], "inputs (the source tokens)"),
                     (BLOCKS_BY_KEY["dec_embed"], "outputs so far (shifted right)")):
        parts.append(f'<text x="{b.x + b.w / 2}" y="{b.y + b.h + 26}" font-size="{FONT - 3}" text-anchor="middle" '
                     f'fill="currentColor">{words}</text>')
    parts += [block_svg(b, extra) for b in BLOCKS]
    parts.append("</svg>")
    return "".join(parts)


def map_html(page_titles: dict[str, str], extra: tuple[tuple[str, str], ...] = ()) -> str:
    """The figure, and under it the same links as a list (readable on a phone): block, page, what it shows there.
    extra: parameters every link adds (a lecture's keys: a block opened from a lecture's step stays in the lecture)."""
    esc = html.escape
    seen, items = set(), []
    for b in BLOCKS:
        if (b.label, b.page) in seen:  # the two stacks' "+ positions" go to one page: listed once
            continue
        seen.add((b.label, b.page))
        where = "encoder" if b.key.startswith("enc") else "decoder" if b.key.startswith("dec") else "output"
        title = page_titles.get(b.page, b.page or "Explorer")
        items.append(f'<li><a href="{esc(b.link(extra))}" target="_self" data-block-list="{b.key}">{esc(b.label)}</a> '
                     f'({where}) → <i>{esc(title)}</i>: {esc(b.teaches)}</li>')
    return (CSS + f'<div class="av-tmap" data-figure="transformer_map">{map_svg(extra)}</div>'
            + '<ul class="av-tmap-list">' + "".join(items) + "</ul>")
