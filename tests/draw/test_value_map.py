"""The value map (attnviz.draw.value_map): every cell's value, its colour ordered by value, text escaped,
no NaN on screen."""

import re

import numpy as np

from attnviz.draw.value_map import CIVIDIS, NO_VALUE, colour_at, map_values, text_colour, value_map_html


def cells(markup: str) -> list[tuple[str, str]]:
    """(background, printed text) of every data cell, row by row."""
    return re.findall(r'<td style="background:(#[0-9a-f]{6});[^"]*"[^>]*>([^<]*)</td>', markup)


def luminance(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_every_cell_carries_its_value_printed_and_coloured_from_low_to_high():
    grid = np.array([[0.5, 2.25, -1.0], [3.0, 0.125, 1.5]])
    markup = value_map_html(grid, ["L0", "L1"], ["H0", "H1", "H2"], title="entropy", row_name="layer", col_name="head")
    np.testing.assert_array_equal(map_values(markup), grid.reshape(-1))
    drawn = cells(markup)
    assert [text for _, text in drawn] == ["0.50", "2.25", "−1.00", "3.00", "0.12", "1.50"]
    # the smallest value gets the first stop, the largest the last; the order of colours follows the values
    by_value = [colour for _, (colour, _) in sorted(zip(grid.reshape(-1), drawn, strict=True))]
    assert by_value[0] == CIVIDIS[0] and by_value[-1] == CIVIDIS[-1]
    assert [luminance(c) for c in by_value] == sorted(luminance(c) for c in by_value)
    assert 'title="layer L1, head H0 · entropy: 3.000"' in markup
    assert ">−1.00<" in markup and ">3.00<" in markup.split("av-map-legend")[1]  # the legend's two ends


def test_a_cell_without_a_finite_value_is_grey_and_never_nan():
    markup = value_map_html(np.array([[np.nan, 1.0], [np.inf, 2.0]]), ["a", "b"], ["x", "y"], title="t",
                            row_name="r", col_name="c")
    drawn = cells(markup)
    assert drawn[0] == (NO_VALUE, "–") and drawn[2] == (NO_VALUE, "–")
    assert "nan" not in markup.lower().replace("data-value=\"nan\"", "") and "inf<" not in markup


def test_labels_and_titles_are_escaped():
    markup = value_map_html(np.ones((1, 1)), ["<b>row</b>"], ["<img src=x onerror=alert(1)>"], title="<i>t</i>",
                            row_name="r", col_name="c")
    assert "<b>" not in markup and "<img" not in markup and "<i>" not in markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in markup
    assert map_values(markup).tolist() == [1.0]  # one value: the colour range is not divided by zero


def test_colours_run_along_the_stops_and_text_stays_readable():
    assert colour_at(0) == CIVIDIS[0] and colour_at(1) == CIVIDIS[-1] and colour_at(2) == CIVIDIS[-1]
    assert colour_at(-1) == CIVIDIS[0]
    assert text_colour(CIVIDIS[0]) == "#fff" and text_colour(CIVIDIS[-1]) == "#111"
