"""What every maker of a handout figure uses (ui/lecture/handout_figures.py holds the makers' registry): the figure
itself, the step's state read as its page reads it, and a small table."""

from __future__ import annotations

import html
from dataclasses import dataclass

from attnviz.analysis.head_search import token_position
from attnviz.lecture.plan import Step


@dataclass(frozen=True)
class Figure:
    html: str  # an SVG or a table, escaped
    caption: str  # what it shows, in words (plain text)
    shows: str = ""  # the id of the page's figure it draws (its lecture focus id: "shuffle", "ranking"), if it has one


def settings(step: Step) -> dict[str, str]:
    """The step's state, one value per key (the first of a repeated one)."""
    found: dict[str, str] = {}
    for key, value in step.state:
        found.setdefault(key, value)
    return found


def head_of(step: Step) -> tuple[int, tuple[int, ...], str | None]:
    """(layer, heads, the query to ring) a step's figure shows: its token question's row, else the layer and head
    its state names (the explorer's layer, a page's own head picker), else layer 0, head 0."""
    heads = getattr(step.answer, "heads", None)  # an answer that names a row of the model (a token question)
    if heads:
        return step.answer.layer, heads, step.answer.query
    state = settings(step)
    layer = int(state.get("layer", 0))
    head = next((int(v) for k, v in step.state if k.endswith("_head") or k == "heads"), 0)
    return layer, (head,), None


def token_at(step: Step, key: str, labels: list[str], default: int) -> int:
    """The token the step's state names under `key` (a position, "it (10)", or a token's text, as a link names one),
    else `default`; an AttnvizError when the sentence lacks it."""
    raw = settings(step).get(key)
    return default if raw is None else token_position(raw, labels, key)


def table(rows: list[tuple], head: tuple[str, ...] = ()) -> str:
    """A small table of plain values (escaped), its first row the head when given."""
    esc = html.escape
    top = "<tr>" + "".join(f"<th>{esc(str(h))}</th>" for h in head) + "</tr>" if head else ""
    body = "".join("<tr>" + "".join(f"<td>{esc(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f'<table class="answers">{top}{body}</table>'


def side_by_side(*drawings: str) -> str:
    """Figures the page sets side by side, side by side where the handout's width holds them (else one under the
    other): Q, K and V; a model and its twin; the two attentions of a decoder layer."""
    return '<div class="row">' + "".join(f"<div>{d}</div>" for d in drawings) + "</div>"
