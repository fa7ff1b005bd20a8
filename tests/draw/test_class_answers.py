"""The class's answers chart (attnviz/draw/class_answers.py): an option's label stays level under its bar, in lines
short enough to sit beside its neighbours' on a phone."""

import pytest

from attnviz.draw.class_answers import LABEL_LINE, choice_figure, number_figure, wrapped

OPTIONS = ("the sun", "the sky", "the grass", "every region the same")  # the default plan's step 3


def test_each_options_label_is_level_and_in_short_lines():
    """On a 390 px phone plotly turned "every region the same" and the chart's bottom cut it to "every region the…"."""
    axis = choice_figure(OPTIONS, [1, 0, 0, 0], "the sun", "marked in the plan").layout.xaxis
    assert list(axis.tickvals) == list(OPTIONS) and axis.tickangle == 0 and axis.automargin
    assert list(axis.ticktext) == ["the sun", "the sky", "the grass", "every region<br>the same"]
    for label in axis.ticktext:
        assert all(len(line) <= LABEL_LINE or " " not in line for line in label.split("<br>")), label


def test_a_label_is_broken_between_words_and_escaped():
    assert wrapped("It rises by about 4 nats, most of the way to chance") == \
        "It rises by<br>about 4<br>nats, most<br>of the way<br>to chance"
    assert wrapped("unbreakablewordlongerthantwelve") == "unbreakablewordlongerthantwelve"
    axis = choice_figure(("a <b> tag", "yes"), [0, 0], "yes", "marked in the plan").layout.xaxis
    assert axis.ticktext[0] == "a &lt;b&gt; tag"  # two options: lines of up to 24 characters


@pytest.mark.parametrize(("answers", "right"), [
    ([2, 9], 2.0),  # the default plan's step 14 (the ticks were 5 and 10: the 2 nowhere on the axis)
    ([240, 300, 512], 256.0),
    ([0.61, 0.7, 0.68], 0.6812),
    ([], 1.0),
])
def test_the_right_number_is_on_the_axis_marked_and_no_tick_crowds_it(answers, right):
    axis = number_figure(answers, right, "computed").to_plotly_json()["layout"]["xaxis"]
    low, high = axis["range"]
    ticks = dict(zip(axis["tickvals"], axis["ticktext"], strict=True))
    assert ticks[right] == f"✓ {right:.4g}" and low <= right <= high
    others = sorted(v for v in ticks if v != right)
    assert len(others) >= 2 and all(low <= v <= high for v in others)
    step = min(b - a for a, b in zip(others, others[1:], strict=False))  # the round ticks' step
    assert all(abs(v - right) >= step / 2 - 1e-9 for v in others)
