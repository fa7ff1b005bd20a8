"""The room's handout for download (attnviz.lecture.record): the class's answers from the store; for each question
the right answer and for each step its figures, both for the step's own state (ui/lecture/step_state.py); and the
viewer's entries for the steps whose page runs the shared model (their run, opening at the step's layer)."""

from __future__ import annotations

import contextlib
import html
import logging

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.plan import Step
from attnviz.lecture.record import StepFigure, StepRecord, StepViewer, record_html
from attnviz.notebook.inputs import run_input
from ui.lecture.handout_figures import RUNS_THE_SENTENCE, head_of, step_figures
from ui.lecture.plans import plan_by_id
from ui.lecture.step_state import asked, right_answer, step_view
from ui.lecture.store import lecture_store

log = logging.getLogger(__name__)


def room_record(code: str, key: str) -> str:
    """The room's handout as one HTML page (StoreError and WrongKey as the store raises them)."""
    store = lecture_store()
    state = store.room(code)
    if state is None:
        raise AttnvizError(f"There is no room {code} any more.")
    plan = plan_by_id(state.plan_id)
    records, figures, viewers = [], [], []
    for number, step in enumerate(plan.steps, start=1):
        figures += handout_figures(number, step)
        if step.page in RUNS_THE_SENTENCE:
            with contextlib.suppress(AttnvizError):  # a step whose text cannot run has no entry (its figures say why)
                viewers.append(StepViewer(number, run_input(step_view(step).run()).sets[0], head_of(step)[0]))
        if step.answer is None:
            continue
        values = tuple(a.value for a in store.answers(code, number, key))
        right, ask, problem = None, None, ""
        try:
            right = right_answer(step)
            ask = asked(step, right)
        except AttnvizError as err:
            problem = str(err)
        records.append(StepRecord(number, number in state.revealed, values, right, ask, problem))
    return record_html(plan, code, records, figures, viewers)


def handout_figures(number: int, step: Step) -> list[StepFigure]:
    """The step's figures; one that cannot be made is said in its place (the rest of the handout is made)."""
    try:
        return [StepFigure(number, f.html, f.caption, f.shows) for f in step_figures(step)]
    except AttnvizError as err:
        return [StepFigure(number, "", f"This step's figure could not be made: {err}")]
    except Exception as err:  # a handout of the other steps is worth more than none
        log.exception("The handout's figure of step %s failed", number)
        return [StepFigure(number, "", f"This step's figure could not be made ({type(err).__name__}).")]


def export_button(code: str, key: str, where=None) -> None:
    """One click: the room's record as an HTML file, made when clicked (deferred: no cost on every run). A problem
    (the store out of reach) is the file's one sentence, and said nowhere else: the click has no run of its own."""

    def made() -> str:
        try:
            return room_record(code, key)
        except AttnvizError as err:
            return f"<!doctype html><meta charset='utf-8'><p>The record of room {html.escape(code)} could not be " \
                   f"made: {html.escape(str(err))}</p>"

    (where or st).download_button("Export the lecture (one HTML file)", made, file_name=f"lecture-{code}.html",
                                  mime="text/html", key="lecture_export", icon=":material/download:",
                                  on_click="ignore", help="The handout: each step's question, the class's answers "
                                  "beside the right answer, why, and its figures; a summary at the end. One file that "
                                  "opens offline and prints well (Print → Save as PDF).")
