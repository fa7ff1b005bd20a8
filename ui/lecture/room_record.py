"""The room's record for download (attnviz.lecture.record): the class's answers from the store, and for each token
question the model's row (for a number question that names a quantity, its computed value) from the from-scratch
run for the step's settings (its URL state read as its page reads
it: the model, text, mask, scale, layer and heads; defaults where the step names none)."""

from __future__ import annotations

import contextlib
import html

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture.plan import Step
from attnviz.lecture.record import StepFigure, StepRecord, record_html
from attnviz.notebook.inputs import run_input
from ui.lecture.plans import plan_by_id
from ui.lecture.step_state import asked, right_answer, step_view
from ui.lecture.store import lecture_store


def room_record(code: str, key: str) -> str:
    """The room's record as one HTML page (StoreError and WrongKey as the store raises them)."""
    store = lecture_store()
    state = store.room(code)
    if state is None:
        raise AttnvizError(f"There is no room {code} any more.")
    plan = plan_by_id(state.plan_id)
    records, figures = [], []
    for number, step in enumerate(plan.steps, start=1):
        if shows_the_shared_run(step):
            # a step whose text cannot run has no figure in the record (its page says why)
            with contextlib.suppress(AttnvizError):
                figures.append(StepFigure(number, run_input(step_view(step).run()).sets[0]))
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
    return record_html(plan, code, records, figures)


def shows_the_shared_run(step: Step) -> bool:
    """A step whose figures are the shared model's attention: it asks a token question, or names a text or a model
    (a lab with models of its own, such as the scaling lab, names neither)."""
    return any(k in ("text", "model") for k, _ in step.state)


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
                                  on_click="ignore", help="Each step's title and question, the class's answers "
                                  "beside the model's, the heatmaps of the app: one file that opens offline.")
