"""A lecture's handout: one HTML file that opens offline and prints well (a print stylesheet: Print → PDF in any
browser). For each step: its title, the question, the class's answers with the right answer marked (its kind draws
them), the explanation, and the step's figures in the step's state, drawn static (SVG and tables print as they
show); then a summary of what was covered and how the class answered. Under it, on screen only, the app's viewer of
the model's attention for the steps that run the shared model, each opening at its step's layer. Nothing fetched.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace

from attnviz.draw.palette import CLASS, RIGHT
from attnviz.lecture.kinds import Ask, Right, answer_kind
from attnviz.lecture.kinds.base import answers_said
from attnviz.lecture.plan import Plan, Step
from attnviz.notebook.document import document_bytes
from attnviz.notebook.html import page_html
from attnviz.notebook.inputs import AttentionSet

STYLE = """<style>
.avr { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 52rem; line-height: 1.45;
  color: #111; }
.avr h1 { font-size: 1.7rem; margin-bottom: 0.2rem; } .avr h2 { font-size: 1.25rem; margin: 0 0 0.4rem; }
.avr h3 { font-size: 1.05rem; margin: 1rem 0 0.3rem; }
.avr p { margin: 0.3rem 0; } .avr .muted { color: #555; }
.avr section.step { border-top: 2px solid #ddd; padding-top: 0.8rem; margin-top: 1.2rem; }
.avr .question { font-size: 1.05rem; }
.avr table { border-collapse: collapse; margin: 0.4rem 0; font-size: 0.92rem; }
.avr td, .avr th { padding: 2px 8px; text-align: left; border-bottom: 1px solid #eee; vertical-align: top; }
.avr .bar { display: inline-block; height: 0.8rem; background: CLASS; vertical-align: middle;
  print-color-adjust: exact; -webkit-print-color-adjust: exact; }
.avr .right { color: RIGHT; font-weight: 700; }
.avr .explain { background: #f4f7f4; border-left: 4px solid RIGHT; padding: 0.4rem 0.7rem; margin: 0.5rem 0; }
.avr figure { margin: 0.6rem 0; } .avr figcaption { font-size: 0.88rem; color: #444; margin-top: 0.2rem; }
.avr figure svg { display: block; max-width: 100%; height: auto; max-height: 15cm; }
.avr figure .map svg { max-height: 11cm; }
.avr figure .row { display: flex; flex-wrap: wrap; gap: 0.6rem 1.5rem; align-items: flex-start; }
.avr .summary ol li { margin-bottom: 0.25rem; }
.avr code { font-size: 0.95em; }
@page { size: A4; margin: 15mm 14mm; }
@media print {
  body { margin: 0 !important; }
  #attnviz-root, .avr .screen-only { display: none !important; }
  .avr { max-width: none; font-size: 10.5pt; }
  .avr h2, .avr h3 { break-after: avoid; }
  .avr figure, .avr table, .avr .explain { break-inside: avoid; }
  .avr section.summary { break-before: page; }
  .avr svg, .avr .explain, .avr .bar { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
</style>""".replace("CLASS", CLASS).replace("RIGHT", RIGHT)  # attnviz/draw/palette.py: the class chart's colours


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
    """One of a step's figures, static: an SVG or a table (escaped HTML), and what it shows in words."""

    number: int
    html: str
    caption: str
    shows: str = ""  # the id of the page's figure it draws (a step's focus names one), "" when none


@dataclass(frozen=True)
class StepViewer:
    """A step's entry in the viewer under the handout: the model's attention for the step's settings."""

    number: int
    attention: AttentionSet
    layer: int = 0  # the layer the viewer opens at for this step


def paragraphs(text: str) -> str:
    """A plan's text as HTML paragraphs (a blank line starts a new one)."""
    return "".join(f"<p>{html.escape(' '.join(p.split()))}</p>" for p in re.split(r"\n\s*\n", text.strip()) if p.strip())


def first_sentence(text: str) -> str:
    """The first sentence of an explanation ("0.68" and "e.g." do not end it)."""
    flat = " ".join(text.split())
    return re.split(r"(?<=[a-z)\"”'’][.!?])\s+(?=[A-Z\"“])", flat, maxsplit=1)[0]


def answers_html(step: Step, record: StepRecord) -> str:
    """The class's answers to one step, the right answer marked (its kind draws them)."""
    esc = html.escape
    values = list(record.values)
    head = f"<p><b>The class:</b> {answers_said(len(values))}"
    head += "" if record.revealed else " (the step was not revealed)"
    head += "</p>"
    if record.right is None:
        return head + f'<p class="muted">The right answer: {esc(record.problem)}</p>'
    right = (f'<p><b>The right answer:</b> <span class="right">{esc(record.right.text)}</span> '
             f"({esc(record.right.source)}).</p>")
    return head + right + answer_kind(step.answer).record_html(step.answer, record.right, record.ask, values)


def step_html(number: int, step: Step, record: StepRecord | None, figures: list[StepFigure]) -> str:
    esc = html.escape
    parts = [f'<section class="step" id="step-{number}"><h2>Step {number}: {esc(step.title)}</h2>']
    if step.question:
        parts.append(f'<p class="question"><b>Question.</b> {esc(step.question)}</p>')
    if step.answer is not None and record is not None:
        parts.append(answers_html(step, record))
    if step.explain:
        word = "Why" if step.question else "What it shows"
        parts.append(f'<div class="explain"><b>{word}.</b> {paragraphs(step.explain)}</div>')
    for figure in figures:
        said = f"<figcaption>{esc(figure.caption)}</figcaption>" if figure.caption else ""
        shows = f' data-figure="{esc(figure.shows)}"' if figure.shows else ""
        parts.append(f"<figure{shows}>{figure.html}{said}</figure>" if figure.html else
                     f'<p class="muted">{esc(figure.caption)}</p>')
    if not figures:
        parts.append(f'<p class="muted">attnviz makes no printed figure of the page /{esc(step.page)}: open it in '
                     "attnviz with the step's settings to see this step's figures.</p>")
    parts.append("</section>")
    return "".join(parts)


def summary_html(plan: Plan, by_number: dict[int, StepRecord]) -> str:
    """What was covered (each step's first sentence of explanation), and how the class answered each question."""
    esc = html.escape
    covered = "".join(f"<li><b>{esc(s.title)}.</b> {esc(first_sentence(s.explain))}</li>" if s.explain else
                      f"<li><b>{esc(s.title)}.</b></li>" for s in plan.steps)
    rows = []
    for number, step in enumerate(plan.steps, start=1):
        record = by_number.get(number)
        if step.answer is None or record is None:
            continue
        if record.right is None:
            tally = "—"
        else:
            kind = answer_kind(step.answer)
            right = sum(kind.is_right(step.answer, record.right, v) for v in record.values)
            tally = f"{right} of {answers_said(len(record.values))}" if record.values else "no answers"
        answer = esc(record.right.text) if record.right else esc(record.problem)
        rows.append(f"<tr><td>{number}</td><td>{esc(step.question)}</td><td class=\"right\">{answer}</td>"
                    f"<td>{tally}</td></tr>")
    quiz = ("<h3>The questions, and how the class answered</h3><table><tr><th>step</th><th>question</th>"
            f"<th>right answer</th><th>right</th></tr>{''.join(rows)}</table>") if rows else ""
    return (f'<section class="summary"><h2>Summary: what we covered</h2><ol>{covered}</ol>{quiz}</section>')


def record_html(plan: Plan, room: str, records: list[StepRecord], figures: list[StepFigure],
                viewers: list[StepViewer] | None = None) -> str:
    """The room's handout as one HTML page (the steps in the plan's order, then the summary and the viewer)."""
    esc = html.escape
    minutes = sum(s.minutes or 0 for s in plan.steps)
    by_number = {r.number: r for r in records}
    parts = [STYLE, '<div class="avr">', f"<h1>{esc(plan.title)}</h1>"]
    if plan.description:
        parts.append(f'<p class="muted">{esc(plan.description)}</p>')
    parts.append(f'<p class="muted">Lecture room {esc(room)}: {len(plan.steps)} steps'
                 + (f", {minutes:g} minutes planned" if minutes else "") + ". Each step with its question, the "
                 "class's answers (anonymous) beside the right answer, why, and its figures for the step's settings. "
                 "Print it (Print → Save as PDF) to keep it.</p>")
    for number, step in enumerate(plan.steps, start=1):
        parts.append(step_html(number, step, by_number.get(number), [f for f in figures if f.number == number]))
    parts.append(summary_html(plan, by_number))
    viewers = viewers or []
    if not viewers:
        parts.append("</div>")
        return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(plan.title)}</title>'
                f'</head><body>{"".join(parts)}</body></html>')
    parts.append('<h2 class="screen-only">The model\'s attention, step by step</h2><p class="muted screen-only">'
                 "For the steps that run the model on a sentence: pick a step under “Attention”; each opens at its "
                 "step's layer. Hover or click a cell for its numbers.</p></div>")
    sets = [replace(v.attention, name=f"Step {v.number}: {plan.step(v.number).title}") for v in viewers]
    document = document_bytes(sets, view="heads", title=f"{plan.title}: the model's attention", subtitle=f"room {room}",
                              opens_at=[v.layer for v in viewers])
    return page_html(document, f"attnviz · {plan.title} · room {room}", "".join(parts))
