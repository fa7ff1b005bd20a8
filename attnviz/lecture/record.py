"""A lecture's record: one offline HTML file (attnviz.save_html's page and heatmaps) with each step's title and
question, the class's answers beside the model's (for a token question, the students per key token beside the
model's attention weight of the query, the model's largest marked; for a choice or a number, the counts with the
right answer: the value attnviz computes where the plan names one, else the plan's), and the steps' figures: the
model's attention for each step's settings, every layer and head, in the file's viewer (one entry per step).
Nothing fetched: it opens from a disk, after class.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace

from attnviz.lecture.kinds import Ask, Right, answer_kind
from attnviz.lecture.kinds.base import answers_said
from attnviz.lecture.plan import Plan, Step
from attnviz.notebook.document import document_bytes
from attnviz.notebook.html import page_html
from attnviz.notebook.inputs import AttentionSet

STYLE = """<style>
.avr { font-family: system-ui, sans-serif; max-width: 60rem; }
.avr h1 { font-size: 1.6rem; } .avr h2 { font-size: 1.2rem; margin: 1.4rem 0 0.3rem; }
.avr p { margin: 0.25rem 0; } .avr .muted { color: #666; }
.avr table { border-collapse: collapse; margin: 0.3rem 0; } .avr td, .avr th { padding: 2px 8px; text-align: left; }
.avr .bar { display: inline-block; height: 0.8rem; background: #2e86ab; vertical-align: middle; }
.avr .right { color: #2a9d4b; font-weight: 600; }
</style>"""


@dataclass(frozen=True)
class StepRecord:
    """What the class answered at one step (values as the store keeps them), and the right answer for the step's
    own state (what was asked, to read the values back)."""

    number: int
    revealed: bool
    values: tuple[str, ...]
    right: Right | None = None
    ask: Ask | None = None
    problem: str = ""  # why the right answer could not be computed


@dataclass(frozen=True)
class StepFigure:
    """A step's figure for the viewer: the model's attention for the step's settings (its run, every layer)."""

    number: int
    attention: AttentionSet


def record_html(plan: Plan, room: str, records: list[StepRecord], figures: list[StepFigure]) -> str:
    """The room's record as one HTML page (the steps in the plan's order)."""
    esc = html.escape
    parts = [STYLE, '<div class="avr">', f"<h1>{esc(plan.title)}</h1>",
             f'<p class="muted">Lecture room {esc(room)}: every step, with the class\'s answers beside the model\'s. '
             "Answers are anonymous.</p>"]
    by_number = {r.number: r for r in records}
    for number, step in enumerate(plan.steps, start=1):
        parts.append(f"<h2>Step {number}: {esc(step.title)}</h2>")
        if step.question:
            parts.append(f"<p><b>Question.</b> {esc(step.question)}</p>")
        record = by_number.get(number)
        if step.answer is None or record is None:
            continue
        parts.append(answers_html(step, record))
    sets = [replace(f.attention, name=f"Step {f.number}: {plan.step(f.number).title}") for f in figures]
    if not sets:  # nothing for the viewer: a plain page
        return f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(plan.title)}</title>' \
               f'</head><body>{"".join(parts)}</div></body></html>'
    parts.append("<h2>The figures</h2><p class=\"muted\">The model's attention for each step's settings "
                 "(sentence, model, mask, scale): pick a step under “Attention”, then a layer.</p></div>")
    document = document_bytes(sets, view="heads", title=f"{plan.title}: the model's attention, step by step",
                              subtitle=f"room {room}")
    return page_html(document, f"attnviz · {plan.title} · room {room}", "".join(parts))


def answers_html(step: Step, record: StepRecord) -> str:
    """The class's answers to one step, the right answer marked (its kind draws them)."""
    esc = html.escape
    values = list(record.values)
    head = f"<p><b>The class:</b> {answers_said(len(values))}"
    head += "" if record.revealed else " (the step was not revealed)"
    head += "</p>"
    if record.right is None:
        return head + f'<p class="muted">The right answer: {esc(record.problem)}</p>'
    right = f'<p><b>The right answer:</b> <span class="right">{esc(record.right.text)}</span> ({esc(record.right.source)}).</p>'
    return head + right + answer_kind(step.answer).record_html(step.answer, record.right, record.ask, values)


def bar(count: int, most: int) -> str:
    return f'<span class="bar" style="width: {12 * count / most:.2f}rem"></span>'
