"""The class's answers on a projector at Reveal, in a column beside the figure that answers the question (the step's
focus: ui/lecture/gate.py), so that the one screen holds both. The right answer's words come first, at the top of the
screen; under them the class's answers, the right one marked by a word and a shape ("✓ right") as well as its green:
- a pick (a choice, a key token) is a table, an option a row with its count and bar; where the kind's figure holds
  the model's row too (a token question's RowsFigure), its weight is printed in a column of its own beside the count,
  so the table reads across as it is drawn: the class's count, then the model's weight;
- a number is the kind's own histogram, its dashed green line the right number, its title's words above it as text
  (they wrap in a narrow column, plotly's title does not), then the class's median and range.
Read through the kinds' registry alone (is_right, the Ask's options, the Reveal's figure): a new kind needs nothing
here.
"""

from __future__ import annotations

import html
from statistics import median

import streamlit as st

from attnviz.draw.palette import CLASS, RIGHT
from attnviz.lecture.kinds import PICK, Ask, Reveal, Right, RowsFigure, answer_kind
from attnviz.lecture.kinds.base import answers_said, numbers
from ui.charts import plotly_chart

MARK = "✓ right"  # the right option's word, beside its label
BESIDE_CHART_PX = 200  # the histogram's height before the projector's type adds its room (about 100 px)


def draw_beside(spec, right: Right, ask: Ask, values: list[str], reveal: Reveal) -> None:
    """The right answer in words, then the class's answers (a table of a pick's options, or a number's histogram)."""
    st.markdown(reveal.headline)
    kind = answer_kind(spec)
    if ask.widget == PICK:
        counts = ask.counts(values)
        marks = [kind.is_right(spec, right, str(option)) for option in ask.options]
        figure = reveal.figure
        table = (model_table(ask.labels, counts, marks, figure) if isinstance(figure, RowsFigure)
                 else tally_table(ask.labels, counts, marks))
        st.html(CSS + table)
        return
    number_chart(reveal)
    got = sorted(numbers(values))
    hits = sum(kind.is_right(spec, right, v) for v in values)
    spread = f" Median {median(got):g}, from {got[0]:g} to {got[-1]:g}." if got else ""
    st.markdown(f"**The class:** {answers_said(len(got))}, **{hits}** right.{spread}" if got else
                "**The class gave no answers.**")


def tally_table(labels, counts: list[int], marks: list[bool]) -> str:
    """A pick's options, each a row: its label (and ✓ right) with its bar under it, then its count. The label has the
    column's width to itself: beside a count and a bar it wrapped into 3 to 5 lines."""
    most = max(counts, default=0) or 1
    rows = []
    for label, count, right_one in zip(labels, counts, marks, strict=True):
        rows.append(f"<tr{RIGHT_ROW if right_one else ''}><th scope='row'>{html.escape(str(label))}"
                    f"{MARK_HTML if right_one else ''}{bar(count / most, 9)}</th><td>{count}</td></tr>")
    return (f"<table class='tally'><caption>{class_said(sum(counts))}; {MARK}: the right one</caption><tr><th "
            f"scope='col'>option</th><th scope='col'>students</th></tr>{''.join(rows)}</table>")


def model_table(labels, counts: list[int], marks: list[bool], figure: RowsFigure) -> str:
    """A key token a row: how many of the class picked it, then the model's weight, printed (the figure's last row,
    under the class's share), as the table is read across. With no answers the class's column is left out, as the
    figure leaves out its row: a column of 0s read as "nobody picked it"."""
    total = sum(counts)
    most = max(counts, default=0) or 1
    name, weights = figure.rows[-1], [float(v) for v in figure.values[-1]]
    head = (f"<tr><th scope='col'>{html.escape(figure.axis_words[1])}</th>"
            + ("<th scope='col'>class</th>" if total else "") + f"<th scope='col'>{html.escape(name)}</th></tr>")
    rows = []
    for label, count, weight, right_one in zip(labels, counts, weights, marks, strict=True):
        picked = f"<td>{count}{bar(count / most, 1.2)}</td>" if total else ""
        rows.append(f"<tr{RIGHT_ROW if right_one else ''}><th scope='row'>{html.escape(str(label))}"
                    f"{MARK_HTML if right_one else ''}</th>{picked}<td>{weight:.2f}{bar(weight, 2)}</td></tr>")
    said = (f"A {figure.axis_words[1]} a row: how many picked it ({answers_said(total)}), then the {name}'s weight"
            if total else f"The class gave no answers: a {figure.axis_words[1]} a row, the {name}'s weight")
    return f"<table class='tally rows'><caption>{html.escape(said)}</caption>{head}{''.join(rows)}</table>"


def class_said(total: int) -> str:
    """How many answered, or that nobody did (never "0 answers")."""
    return f"The class ({answers_said(total)})" if total else "The class gave no answers"


def bar(share: float, rem: float) -> str:
    """A share (0..1) as a bar in a track `rem` wide (its number is printed beside it; the track keeps the numbers of
    a column aligned, a bar of 0 too)."""
    return (f"<span class='tally-track' aria-hidden='true' style='width:{rem}rem'><span class='tally-bar' "
            f"style='width:{100 * min(max(share, 0.0), 1.0):.1f}%'></span></span>")


def number_chart(reveal: Reveal) -> None:
    """The kind's histogram with its right line, its title's words above it as text."""
    if reveal.figure is None:
        return
    fig = reveal.figure.to_dict() if hasattr(reveal.figure, "to_dict") else dict(reveal.figure)
    layout = fig.setdefault("layout", {})
    title = (layout.pop("title", None) or {}).get("text") or ""
    if title:
        st.html(CSS + f"<p class='chart-words'>{'; '.join(html.escape(t) for t in title.split('<br>'))}</p>")
    layout.update(height=BESIDE_CHART_PX, margin={"t": 10, "b": 40, "l": 50, "r": 10})
    plotly_chart(st, fig, key=reveal.key)


RIGHT_ROW = " class='right'"
MARK_HTML = f" <span class='mark'>{MARK}</span>"
# every word of it at least 20 px on a 1024 × 768 projector (1rem is 19 px there; the caption and the headers were 18-19)
CSS = f"""<style>
.tally {{ border-collapse: collapse; font-size: 1.1rem; width: 100%; }}
.tally caption {{ caption-side: top; text-align: left; font-size: 1.06rem; padding-bottom: 0.1rem; }}
.tally th, .tally td {{ padding: 0.05rem 0.3rem 0.05rem 0; vertical-align: top; line-height: 1.2; }}
.tally th {{ text-align: left; font-weight: 400; }}
.tally td {{ text-align: right; white-space: nowrap; }}
.tally tr:first-of-type th {{ font-size: 1.06rem; font-weight: 600; }}
.tally tr.right th {{ font-weight: 700; color: {RIGHT}; }}
.tally .mark {{ white-space: nowrap; }}
.tally-track {{ display: block; max-width: 100%; margin-top: 0.15rem; }}
.tally-bar {{ display: block; height: 0.7rem; background: {CLASS}; }}
.tally.rows {{ font-size: 1.05rem; }}
.tally.rows th, .tally.rows td {{ padding-top: 0; padding-bottom: 0; line-height: 1.15; }}
.tally.rows .tally-track {{ display: inline-block; margin: 0 0 0 0.2rem; vertical-align: middle; }}
.tally tr.right .tally-bar {{ background: {RIGHT}; }}
.chart-words {{ font-size: 1.05rem; margin: 0; }}
</style>"""
