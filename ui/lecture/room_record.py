"""The room's record for download (attnviz.lecture.record): the class's answers from the store, and for each token
question the model's row (for a number question that names a quantity, its computed value) from the from-scratch
run for the step's settings (its URL state read as its page reads
it: the model, text, mask, scale, layer and heads; defaults where the step names none)."""

from __future__ import annotations

import contextlib
import html

import streamlit as st

from attnviz.engine.mask_kinds import MASKS
from attnviz.errors import AttnvizError
from attnviz.lecture.plan import Step
from attnviz.lecture.record import StepFigure, StepRecord, TokenRow, record_html
from attnviz.notebook.inputs import run_input
from ui import pickers, runs
from ui.access import server_settings
from ui.lecture.answers import number_truth, token_truth
from ui.lecture.plans import plan_by_id
from ui.lecture.store import lecture_store
from ui.state import ViewState, applied_mask


def step_settings(step: Step) -> dict:
    """The step's URL state as the widgets would hold it (numbers as numbers, switches as booleans)."""
    state: dict = {}
    numbers = {p.name: type(p.default) for kind in MASKS.values() for p in kind.parameters}
    for key, value in step.state:
        if key == "heads":
            state.setdefault("heads", []).append(int(value))
        elif key == "layer":
            state[key] = int(value)
        elif key == "factor":
            state[key] = float(value)
        elif key == pickers.SCALE_SWITCH:
            state[key] = value == "true"
        elif numbers.get(key) in (int, float):
            state[key] = numbers[key](value)
        else:
            state[key] = value
    return state


def step_view(step: Step) -> ViewState:
    """The view a step's page opens with (no lesson model swap: a token question sits on a page of the shared model)."""
    state = step_settings(step)
    choice, spec = pickers.read_model(state)
    device = pickers.read_device(state)
    model = runs.model_for(spec, device)
    text, mask_choice = pickers.read_text(state), pickers.read_mask(state)
    mask_spec, _, problem = applied_mask(spec, device, text, mask_choice, server_settings().max_tokens)
    layer, heads = pickers.read_layer_and_heads(state, model.n_layers, model.n_heads)
    return ViewState(choice, spec, text, mask_choice, mask_spec, pickers.read_scale(state), device, layer, heads,
                     None, (), problem)


def step_right_answer(step: Step) -> None:
    """The model's row of a token question, or a number question's computed value, for the step's settings: made once
    so that Reveal finds it (ui/lecture/warm.py). AttnvizError where it cannot be computed."""
    if step.answer.kind == "token":
        token_truth(step_view(step), step.answer)
    elif step.answer.quantity:
        number_truth(step_view(step), step.answer)


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
        truth, problem, computed = None, "", None
        try:
            if step.answer.kind == "token":
                found = token_truth(step_view(step), step.answer)
                truth = TokenRow(found.tokens, found.query, found.row, found.what)
            elif step.answer.quantity:
                right = number_truth(step_view(step), step.answer)
                computed = (right.value, right.what)
        except AttnvizError as err:
            problem = str(err)
        records.append(StepRecord(number, number in state.revealed, values, truth, problem, computed))
    return record_html(plan, code, records, figures)


def shows_the_shared_run(step: Step) -> bool:
    """A step whose figures are the shared model's attention: it asks a token question, or names a text or a model
    (a lab with models of its own, such as the scaling lab, names neither)."""
    return (step.answer is not None and step.answer.kind == "token") or any(k in ("text", "model") for k, _ in step.state)


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
