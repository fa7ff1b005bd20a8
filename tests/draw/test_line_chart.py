"""The SVG line chart (attnviz.draw.line_chart): lines hold their values, axes span the data, text is escaped."""

import re

import numpy as np

from attnviz.draw.line_chart import chart_lines, decade_ticks, line_chart_svg, nice_ticks, tick_label


def polyline_points(markup: str, name: str) -> np.ndarray:
    points = re.search(rf'<polyline points="([^"]*)"[^>]*data-name="{re.escape(name)}"', markup).group(1)
    return np.array([[float(v) for v in p.split(",")] for p in points.split()])


def test_each_line_keeps_its_values_and_rises_with_them():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    markup = line_chart_svg(x, {"square": x ** 2, "line": x}, x_title="n", y_title="pairs", marker_x=3,
                            marker_label="your n")
    lines = chart_lines(markup)
    np.testing.assert_array_equal(lines["square"], [1, 4, 9, 16])
    np.testing.assert_array_equal(lines["line"], [1, 2, 3, 4])
    pts = polyline_points(markup, "square")
    assert np.all(np.diff(pts[:, 0]) > 0) and np.all(np.diff(pts[:, 1]) < 0)  # right and up (SVG y runs down)
    assert 'data-name="line" data-y=' in markup
    # each line its own colour and dash pattern, in the plot and in its legend's sample (lines that run together,
    # as padding's just under full, stay apart; the pattern tells them without colour vision)
    first, second = (re.search(rf'<polyline [^>]*stroke="([^"]+)"([^>]*)data-name="{n}"', markup).groups()
                     for n in ("square", "line"))
    assert first[0] != second[0] and "stroke-dasharray" not in first[1] and 'stroke-dasharray="8 4"' in second[1]
    assert f'stroke="{second[0]}" stroke-width="3" stroke-dasharray="8 4"/></svg>line</span>' in markup
    assert "<title>square: n = 3, pairs = 9</title>" in markup  # the dot at the marked n says its value


def test_log_axes_use_decades_and_skip_what_a_log_cannot_show():
    x = np.array([8.0, 64.0, 512.0])
    markup = line_chart_svg(x, {"full": x ** 2, "zero": np.zeros(3)}, x_title="n", y_title="pairs", log_axes=True)
    assert chart_lines(markup)["zero"].tolist() == [0, 0, 0]  # kept in the data, not drawn (log 0 = −∞)
    assert polyline_points(markup, "full").shape == (3, 2)
    assert re.search(r'<polyline points="" [^>]*data-name="zero"', markup)
    assert decade_ticks(8, 512) == [10, 100] and decade_ticks(64, 262144) == [100, 1000, 10000, 100000]


def test_ticks_are_round_and_labels_short():
    assert nice_ticks(0, 262144) == [0, 50000, 100000, 150000, 200000, 250000]
    assert nice_ticks(8, 512) == [100, 200, 300, 400, 500]
    assert [tick_label(v) for v in (12, 1500, 250000, 1.5e6)] == ["12", "1,500", "250k", "1.5M"]


def test_names_and_titles_are_escaped():
    markup = line_chart_svg([1, 2], {"<script>alert(1)</script>": [1, 2]}, x_title="<b>n</b>", y_title="y")
    assert "<script>" not in markup and "<b>" not in markup
    assert list(chart_lines(markup)) == ["<script>alert(1)</script>"]


def test_a_marker_between_computed_points_gets_its_line_but_no_made_up_values():
    markup = line_chart_svg([1, 2, 4], {"a": [1, 4, 16]}, x_title="n", y_title="pairs", marker_x=3, marker_label="n = 3")
    assert "n = 3</text>" in markup and "<circle" not in markup  # 9 was never computed: no dot claims a value
