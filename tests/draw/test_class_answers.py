"""The class's answers chart (attnviz/draw/class_answers.py): an option's label stays level under its bar, in lines
short enough to sit beside its neighbours' on a phone."""

from attnviz.draw.class_answers import LABEL_LINE, choice_figure, wrapped

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
