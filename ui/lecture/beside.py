"""The class's answers on a projector at Reveal, in a narrow column beside the figure that answers the question (the
step's focus: ui/lecture/gate.py), so that the one screen holds both: a token question's rows stand upright (the
class's share and the model's weight, a key token a row), any other kind's answers are a tally, each option's count
with its bar and the right one ticked, or the numbers' count, how many are right and their spread. A kind's own chart
(answers.draw_reveal) is drawn full width on a phone and in the handout; squeezed into a quarter of a projector its
title and bars' words were cut. Read through the kinds' registry alone (is_right, the Ask's options): a new kind needs
nothing here.
"""

from __future__ import annotations

import html
from statistics import median

import numpy as np
import streamlit as st

from attnviz.lecture.kinds import PICK, Ask, Reveal, Right, RowsFigure, answer_kind
from attnviz.lecture.kinds.base import answers_said, numbers
from ui.heatmap_widget import heatmap


def draw_beside(spec, right: Right, ask: Ask, values: list[str], reveal: Reveal) -> None:
    """The rows upright (then the Reveal's words and caption) or the tally (then its words): the figure first, at the
    top of the screen beside the figure that answers the question; the words, which a narrow column wraps into many
    lines, under it."""
    figure = reveal.figure
    if isinstance(figure, RowsFigure):
        heatmap(np.asarray(figure.values).T, list(figure.columns), list(figure.rows), key=reveal.key, show_values=True,
                y_title=figure.axis_words[1], x_title="", axis_words=figure.axis_words[::-1],
                value_name=figure.value_name)
        st.markdown(reveal.headline)
        if reveal.caption:
            st.caption(reveal.caption)
        return
    kind = answer_kind(spec)
    if ask.widget == PICK:
        counts = ask.counts(values)
        most = max(counts, default=0) or 1
        rows = []
        for option, label, count in zip(ask.options, ask.labels, counts, strict=True):
            right_one = kind.is_right(spec, right, str(option))
            # the bar under its option's words, not in a column of its own: beside a figure the column is a quarter
            # of the screen, and a third column left long options ("It rises by about 4 nats, most of the way to
            # chance") a word a line, the tally running off the projector's first screen
            rows.append(f"<tr{RIGHT_ROW if right_one else ''}><th scope='row'>{html.escape(label)}"
                        f"{' ✓' if right_one else ''}<span class='tally-bar' aria-hidden='true' "
                        f"style='width:{6 * count / most:.2f}rem'></span></th><td>{count}</td></tr>")
        said = f"The class's answers ({answers_said(sum(counts))})" if sum(counts) else "The class gave no answers"
        st.html(CSS + f"<table class='tally'><caption>{said}; ✓ the right one</caption>{''.join(rows)}</table>")
        st.markdown(reveal.headline)
        return
    got = sorted(numbers(values))
    hits = sum(kind.is_right(spec, right, v) for v in values)
    spread = f" Median {median(got):g}, from {got[0]:g} to {got[-1]:g}." if got else ""
    st.markdown(f"**The class:** {answers_said(len(got))}, **{hits}** right.{spread}" if got else
                "**The class gave no answers.**")
    st.markdown(reveal.headline)


RIGHT_ROW = " class='right'"
CSS = """<style>
.tally { border-collapse: collapse; font-size: 1.1rem; width: 100%; }
.tally caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
.tally th { text-align: left; font-weight: 400; padding: 0.2rem 0.5rem 0.2rem 0; }
.tally td { padding: 0.2rem 0.3rem; text-align: right; vertical-align: bottom; }
.tally tr.right th { font-weight: 700; color: #1b7a3a; }
.tally-bar { display: block; height: 0.8rem; margin-top: 0.15rem; background: #1c6e8c; }
.tally tr.right .tally-bar { background: #1b7a3a; }
</style>"""
