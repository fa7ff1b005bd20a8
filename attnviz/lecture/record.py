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

import numpy as np

from attnviz.draw.palette import CLASS, RIGHT
from attnviz.lecture.answer_kinds import (
    AnswerSpec,
    choice_counts,
    numbers,
    right_choice,
    right_number,
    token_counts,
)
from attnviz.lecture.plan import Plan
from attnviz.notebook.document import document_bytes
from attnviz.notebook.html import page_html
from attnviz.notebook.inputs import AttentionSet

STYLE = """<style>
.avr { font-family: system-ui, sans-serif; max-width: 60rem; }
.avr h1 { font-size: 1.6rem; } .avr h2 { font-size: 1.2rem; margin: 1.4rem 0 0.3rem; }
.avr p { margin: 0.25rem 0; } .avr .muted { color: #666; }
.avr table { border-collapse: collapse; margin: 0.3rem 0; } .avr td, .avr th { padding: 2px 8px; text-align: left; }
.avr .bar { display: inline-block; height: 0.8rem; background: CLASS; vertical-align: middle; }
.avr .right { color: RIGHT; font-weight: 600; }
</style>""".replace("CLASS", CLASS).replace("RIGHT", RIGHT)  # attnviz/draw/palette.py: the class chart's colours


@dataclass(frozen=True)
class TokenRow:
    """A token question's truth: the sentence's tokens, the query's position, the model's row and which weights."""

    tokens: tuple[str, ...]
    query: int
    row: np.ndarray  # (n_keys,) attention weights after softmax
    what: str  # "layer 0, head 1"


@dataclass(frozen=True)
class StepRecord:
    """What the class answered at one step (values as the store keeps them), and the model's row for a token one."""

    number: int
    revealed: bool
    values: tuple[str, ...]
    truth: TokenRow | None = None
    truth_problem: str = ""  # why the model's row (or the computed number) could not be computed
    computed: tuple[float, str] | None = None  # a number question's right value computed by attnviz, and what it is


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
        parts.append(answers_html(step.answer, step.expected, record))
    sets = [replace(f.attention, name=f"Step {f.number}: {plan.step(f.number).title}") for f in figures]
    if not sets:  # nothing for the viewer: a plain page
        return f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(plan.title)}</title>' \
               f'</head><body>{"".join(parts)}</div></body></html>'
    parts.append("<h2>The figures</h2><p class=\"muted\">The model's attention for each step's settings "
                 "(sentence, model, mask, scale): pick a step under “Attention”, then a layer.</p></div>")
    document = document_bytes(sets, view="heads", title=f"{plan.title}: the model's attention, step by step",
                              subtitle=f"room {room}")
    return page_html(document, f"attnviz · {plan.title} · room {room}", "".join(parts))


def answers_html(spec: AnswerSpec, expected: str, record: StepRecord) -> str:
    """The class's answers to one step as text and bars (counts), the right answer marked."""
    esc = html.escape
    values = list(record.values)
    head = f"<p><b>The class:</b> {len(values)} answer{'s' if len(values) != 1 else ''}"
    head += "" if record.revealed else " (the step was not revealed)"
    head += "</p>"
    if spec.kind == "token":
        if record.truth is None:
            return head + f'<p class="muted">The model\'s row: {esc(record.truth_problem)}</p>'
        truth = record.truth
        counts = token_counts(values, len(truth.tokens))
        best = int(np.argmax(truth.row))
        rows = "".join(f"<tr><td>{esc(t)}</td><td>{c}</td><td>{bar(c, max(counts + [1]))}</td>"
                       f"<td>{truth.row[i]:.2f}</td></tr>" for i, (t, c) in enumerate(zip(truth.tokens, counts,
                                                                                           strict=True)))
        return (head + f"<p>Query '{esc(truth.tokens[truth.query])}' (token {truth.query}); the model's largest weight "
                f"({esc(truth.what)}): <span class=\"right\">'{esc(truth.tokens[best])}'</span>, "
                f"{truth.row[best]:.2f}.</p><table><tr><th>key token</th><th>students</th><th></th>"
                f"<th>model's weight</th></tr>{rows}</table>")
    if spec.kind == "choice":
        counts = choice_counts(spec, values)
        right = right_choice(spec, expected)
        marked = {right: ' class="right"'}  # and the words "✓ right": not told by colour alone
        rows = "".join(f"<tr><td{marked.get(o, '')}>{esc(o)}{' ✓ right' if o == right else ''}</td><td>{c}</td>"
                       f"<td>{bar(c, max(counts + [1]))}</td></tr>" for o, c in zip(spec.options, counts, strict=True))
        note = f"<p>The right answer (the plan's): <span class=\"right\">{esc(right)}</span>.</p>" if right else ""
        return head + note + f"<table>{rows}</table>"
    got = sorted(numbers(values))
    if record.computed is not None:
        value, what = record.computed
        note = (f"<p>The right answer, computed by attnviz ({esc(what)}): <span class=\"right\">{value:.4g}</span>."
                "</p>")
    else:
        right = right_number(expected)
        note = f"<p>The right answer (the plan's): <span class=\"right\">{right:g}</span>.</p>" if right is not None else ""
        if record.truth_problem:
            note += f'<p class="muted">The computed value: {esc(record.truth_problem)}</p>'
    listed = ", ".join(f"{v:g}" for v in got) or "none"
    return head + note + f"<p>The class's numbers, smallest first: {esc(listed)}.</p>"


def bar(count: int, most: int) -> str:
    return f'<span class="bar" style="width: {12 * count / most:.2f}rem"></span>'
