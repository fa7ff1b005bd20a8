"""Every colour attnviz draws, in one home: the heatmap component's scales (its JS reads them from here, see
attnviz/components/heatmap/__init__.py), the charts' colours, and the marks of the class's answers.

Each stays readable without full colour vision. tests/draw/test_palette.py simulates protanopia, deuteranopia and
tritanopia (Machado et al. 2009, severity 100, as `colorspacious` implements it) and measures in CAM02-UCS:
    a sequential scale's lightness J' runs monotonically from one end to the other;
    a diverging scale's lightness falls from its centre towards both ends, and its two ends stay apart;
    colours drawn together for different things (CATEGORICAL) stay apart, pair by pair;
and nothing is told by colour alone: a legend's words, a printed value, a mark or a dash pattern tells it too.
Colours are "#rrggbb"; a scale is a list of stops, spread evenly from 0 to 1 and interpolated linearly in sRGB.
"""

from __future__ import annotations

# ---- heatmap scales (attnviz/draw/heatmap_payload.py SCALE_KINDS)
# weights: viridis, dark purple (0) to yellow (1); its lightness rises all the way
WEIGHTS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"]
# signed: RdBu reversed, centred at 0: blue < 0 < red, near-white at 0
SIGNED = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b",
          "#67001f"]
# magnitude: the signed scale's upper half, white (0) to dark red, so |Δ| and the Δ it came from agree
MAGNITUDE = SIGNED[SIGNED.index("#f7f7f7"):]
MASKED = "#9e9e9e"  # −∞ (masked) in every kind that holds it: "grey = masked" app-wide
MAY_ATTEND = "#2e7d32"  # a mask's 0: green, darker than the grey so the two differ in lightness (and in print)
# the Model view's layer × head map of one statistic (attnviz/draw/value_map.py): cividis, dark blue to yellow
VALUE_MAP = ["#00224e", "#123570", "#3b496c", "#575d6d", "#707173", "#8a8678", "#a59c74", "#c3b369", "#e1cc55",
             "#fee838"]
NO_VALUE = "#9e9e9e"  # a value-map cell with no finite value (printed as "–")
# marks on a heatmap: shapes, so colour is not what tells them; each is drawn over a white rim
RING = "#e4003a"  # the selected cell's ring, the highlighted thumbnail's frame
CURSOR = "#111111"  # the keyboard's cell cursor (dashed, over a white rim)

# ---- charts
PAIR = ("#2e86ab", "#e4572e")  # two things compared in one chart (scaled / unscaled, dot / additive, ...): blue, orange
NEGATIVE, POSITIVE = SIGNED[1], SIGNED[-2]  # bars and colour scales of signed values, as in the signed heatmaps
GREY, LIGHT_GREY, MUTED = "#7f7f7f", "#bbbbbb", "#969696"  # neutral bars and points: no category of their own
REFERENCE = "#5a5a5a"  # a dashed reference line with its words (chance, a mean)
# the lines of one line chart (the Masks lab's cost chart has 7), each also with its own dash pattern (DASHES):
# the seven colours (of Okabe–Ito's, Tol's and a few more) that stay furthest apart under every simulated
# deficiency, each at least 3:1 against the plot's background (WCAG 1.4.11)
LINES = ["#0072b2", "#b8860b", "#882255", "#000000", "#ee3377", "#332288", "#8c564b"]
QUERY, KEY, ROW = "#1f63b4", "#e0761a", "#c8102e"  # the Q·K space: queries, keys, the chosen query's row
STREAM = ("#333333", "#2f6db5", "#c0392b")  # the encoder's norms: ‖x‖, attention's update, the FFN's update
KL_FINITE, KL_INFINITE = "#4c72b0", "#c44e52"  # per-row KL bars; an infinite one also reads "∞"
CHOSEN, BASELINE = "#c81e1e", "#00783c"  # Head claims: your set (a diamond), nothing knocked out (a line in the legend)
OWN, OTHER = "#1f4e8c", "#8fb3e0"  # a bar for the model's own configuration (also named so), the others
SHADE_FIRST, SHADE_SECOND = "rgba(120,120,120,0.12)", "rgba(0,150,80,0.12)"  # two labelled spans of a sequence
# the class's answers against the right one (attnviz/draw/class_answers.py): the class's bars, and the right answer,
# which is also marked by a word and a hatch or a dashed line. RIGHT is dark enough for text on white (6.8:1).
CLASS, RIGHT = "#2e86ab", "#006d2c"

# What the test checks, by kind. Sequential: lightness monotone. Diverging: falls from the centre, ends apart.
SEQUENTIAL = {"weights": WEIGHTS, "magnitude": MAGNITUDE, "value map": VALUE_MAP}
DIVERGING = {"signed": SIGNED, "signed bars (plotly)": [NEGATIVE, "#ffffff", POSITIVE]}
# colours drawn together for different things, each set as one chart or one heatmap shows them
CATEGORICAL = {
    "a mask's two values": (MAY_ATTEND, MASKED),
    "two things compared": PAIR,
    "signed bars": (NEGATIVE, POSITIVE),
    "the cost chart's lines": tuple(LINES),
    "the Q·K space": (QUERY, KEY, ROW),
    "the encoder's norms": STREAM,
    "per-row KL (finite, infinite, not compared)": (KL_FINITE, KL_INFINITE, LIGHT_GREY),
    "head claims": (MUTED, CHOSEN, BASELINE, REFERENCE),
    "the model's own against the others": (OWN, OTHER),
    "the class's answers": (CLASS, RIGHT),
}
# a masked cell's grey must stand apart from every colour of the scales that can hold −∞
MASKED_APART_FROM = {"signed": SIGNED}


def plotly_scale(stops: list[str]) -> list[list]:
    """A scale's stops as a plotly colorscale: [[0, first], ..., [1, last]], evenly spread."""
    return [[i / (len(stops) - 1), stop] for i, stop in enumerate(stops)]


def heatmap_colours() -> dict:
    """What the heatmap component paints with, as its JS reads it (attnviz/components/heatmap/palette.js)."""
    return {"weights": WEIGHTS, "signed": SIGNED, "magnitude": MAGNITUDE, "masked": MASKED,
            "may_attend": MAY_ATTEND, "ring": RING, "cursor": CURSOR}
