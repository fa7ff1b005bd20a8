"""The handout's static heatmap: every cell's colour and printed value are its weight's (or, signed, its value's on
the blue-white-red scale, −∞ grey), a ringed row is ringed, and labels are escaped."""

import re

import numpy as np

from attnviz.draw.heatmap_svg import colour, heatmap_svg, signed_colour
from attnviz.draw.palette import MASKED, SIGNED


def test_each_cell_says_its_weight_and_is_shaded_by_it():
    w = np.array([[0.7, 0.3, 0.0], [0.1, 0.1, 0.8]])
    svg = heatmap_svg(w, ["a", "<b>"], ["x", "y", "z"], title="layer 3, head 1", ring_row=1)
    cells = re.findall(r'fill="(#[0-9a-f]{6})" stroke="#fff" stroke-width="0.5"><title>([^<]+)</title>', svg)
    assert [t for _, t in cells] == ["a → x: 0.700", "a → y: 0.300", "a → z: 0.000", "&lt;b&gt; → x: 0.100",
                                     "&lt;b&gt; → y: 0.100", "&lt;b&gt; → z: 0.800"]
    assert [c for c, _ in cells] == [colour(v / 0.8) for v in w.ravel()]
    printed = re.findall(r">(\d\.\d\d)</text>", svg)
    assert printed == [f"{v:.2f}" for v in w.ravel()]
    assert svg.count('stroke="#d62728"') == 1 and "<title>layer 3, head 1</title>" in svg
    assert colour(0.0) == "#ffffff" and colour(1.0) == "#08306b"


def test_a_signed_matrix_runs_blue_white_red_and_a_masked_score_is_grey_and_says_minus_infinity():
    w = np.array([[-2.0, 0.0, 2.0], [1.0, -np.inf, -1.0]])
    svg = heatmap_svg(w, ["a", "b"], ["x", "y", "z"], title="S″", kind="signed", limit=2.0)
    cells = re.findall(r'fill="(#[0-9a-f]{6})" stroke="#fff" stroke-width="0.5"><title>([^<]+)</title>', svg)
    assert [t for _, t in cells] == ["a → x: -2.000", "a → y: 0.000", "a → z: 2.000", "b → x: 1.000", "b → y: −∞",
                                     "b → z: -1.000"]
    fills = [c for c, _ in cells]
    assert fills[:3] == [SIGNED[0], "#f7f7f7", SIGNED[-1]] and fills[4] == MASKED
    assert fills[3] == signed_colour(0.5) and fills[5] == signed_colour(-0.5)
    assert re.findall(r">(−∞|-?\d\.\d\d)</text>", svg) == ["-2.00", "0.00", "2.00", "1.00", "−∞", "-1.00"]
