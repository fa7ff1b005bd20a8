"""What the class has answered so far, for the presenter notes alone (the lecturer decides whether to reveal now or to
discuss first): each option's count (A, B, C… as the projector letters them), each key token's, or the numbers'
spread. Plain HTML redrawn by the notes' one-second look: no chart to build each second, and a screen reader reads
the table.
"""

from __future__ import annotations

import html
from statistics import median

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds import PICK
from attnviz.lecture.kinds.base import numbers
from attnviz.lecture.plan import Step
from ui.lecture.step_state import asked, right_answer

TOP_PICKS = 8  # the most-picked options shown (a token question's sentence may have 20 tokens)


def rows_for(step: Step, values: list[str]) -> list[tuple[str, int]]:
    """(what, how many) per option the class picks from, as its answer buttons name them: every option of a
    lettered choice, in its order; else the most picked (a token question's key tokens); [] for a number."""
    ask = asked(step, right_answer(step))
    if ask.widget != PICK:
        return []
    counts = ask.counts(values)
    if ask.lettered:
        return list(zip(ask.labels, counts, strict=True))
    picked = sorted((i for i, c in enumerate(counts) if c), key=lambda i: -counts[i])[:TOP_PICKS]
    return [((ask.said or ask.labels)[i], counts[i]) for i in picked]


def numbers_line(values: list[str]) -> str:
    got = sorted(numbers(values))
    if not got:
        return "No numbers yet."
    common = sorted({v: got.count(v) for v in got}.items(), key=lambda kv: -kv[1])[:5]
    return (f"Median **{median(got):g}**, from {got[0]:g} to {got[-1]:g}. Most given: "
            + ", ".join(f"{v:g} ({c})" for v, c in common) + ".")


def class_so_far(step: Step, values: list[str], revealed: bool) -> None:
    """The class's answers to the step as they stand, for the lecturer's eyes only."""
    total = len(values)
    with st.container(key="notes_class", border=True):
        st.markdown(f"**What the class answered{'' if revealed else ' so far'}** ({total} answer"
                    f"{'s' if total != 1 else ''}; {'on the projector too' if revealed else 'only you see this'})")
        if not total:  # answers close at Reveal: then none is all there will be
            st.caption("The class gave no answers: answers are closed." if revealed else "No answers yet.")
            return
        try:
            rows = rows_for(step, values)
        except AttnvizError as err:
            st.caption(f"The options cannot be read here: {err}")
            return
        if not rows:
            st.markdown(numbers_line(values))
            return
        most = max(count for _, count in rows) or 1
        body = "".join(f"<tr><th scope='row'>{html.escape(what)}</th><td>{count}</td><td aria-hidden='true'>"
                       f"<span class='notes-bar' style='width:{10 * count / most:.2f}rem'></span></td></tr>"
                       for what, count in rows)
        st.html(CSS + f"<table class='notes-class'><caption class='notes-cap'>Answers per option (the most picked "
                f"first, where there are many)</caption>{body}</table>")


CSS = """<style>
.notes-class { border-collapse: collapse; font-size: 1.2rem; }
.notes-class th { text-align: left; font-weight: 500; padding: 0.15rem 0.8rem 0.15rem 0; }
.notes-class td { padding: 0.15rem 0.5rem; }
.notes-bar { display: inline-block; height: 0.9rem; background: #1c6e8c; vertical-align: middle; }
.notes-cap { caption-side: top; text-align: left; color: rgba(49, 51, 63, 0.75); font-size: 0.95rem; }
</style>"""
