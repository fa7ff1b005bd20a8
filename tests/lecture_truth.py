"""A lecture question's right answer computed in the tests, with attnviz's engine alone for the step's own state (the
model, text, mask and scale its plan names; the layer, heads and query its answer names), never through the app's
lecture code (attnviz/lecture/kinds, ui/lecture): what every view must show at Reveal. Used by
tests/app/test_lecture_truth.py (AppTest: every view and the record) and the browser walk of every shipped plan
(tests/browser/test_browser_lecture_walk.py: the projector and a phone).

    truth(step) -> Truth: the right answer as the views write it, and an answer a student gives to be right or wrong
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

import attnviz
from attnviz.engine.mask_kinds import parse_mask
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID

DEFAULT_MODEL = "all-MiniLM-L6-v2"  # the app's default model, as the engine names it
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."  # the app's (ui/pickers.py)
VARIANCE_SAMPLES = 4000  # the Scaling lab's experiment, as a number question's quantity measures it


@cache
def model(name: str):
    return attnviz.load_model(name)


def step_run(step):
    """The step's run: the engine's forward pass for the model, text, mask and scale the step's state names."""
    state = dict(step.state)
    m = model(state.get("model") or DEFAULT_MODEL)
    text = state.get("text", DEFAULT_TEXT)
    mask = state.get("mask", "none")
    return m.run(text, mask=None if mask == "none" else parse_mask(mask, len(m.encode(text).tokens)),
                 scale=state.get("scaled", "true") != "false")


def engine_row(step) -> tuple[list[str], int, np.ndarray]:
    """A token question's (tokens, the query's position, the named row: one head's, or the mean of several heads')."""
    res = step_run(step)
    spec = step.answer
    query = next(i for i, t in enumerate(res.tokens) if t.lower() == spec.query.lower())
    row = res.attentions[spec.layer, list(spec.heads), query, :].mean(dim=0).numpy()  # (n_keys,)
    return list(res.tokens), query, row


def first_token(tokens, text: str) -> int:
    return next(i for i, t in enumerate(tokens) if t.replace("Ġ", "").replace("▁", "").lower() == text.lower())


def quantity(step) -> float:
    """A number question's computed right answer (answer.quantity), from the engine (or the Scaling lab's seeded
    experiment, the measurement the question is about)."""
    spec, state = step.answer, dict(step.state)
    if spec.quantity == "weight":
        res = step_run(step)
        return float(res.attentions[spec.layer, spec.head, first_token(res.tokens, spec.query),
                                    first_token(res.tokens, spec.key)])
    if spec.quantity in ("dot_variance", "dot_spread"):
        d_ks = D_K_GRID if spec.d_k in D_K_GRID else (spec.d_k,)  # the lab's seeded run over its grid, as on its page
        measured = dot_product_variance_experiment(d_ks, n_samples=VARIANCE_SAMPLES)
        variance = float(measured.unscaled_variance[list(d_ks).index(spec.d_k)])
        return variance if spec.quantity == "dot_variance" else variance ** 0.5
    m = model(state.get("model") or DEFAULT_MODEL)
    if spec.quantity == "heads_per_kv":
        return float(m.n_heads // m.n_kv_heads)
    if spec.quantity == "new_keys":
        return float(m.n_kv_heads)
    raise AssertionError(f"the tests compute no quantity {spec.quantity!r}: add it to tests/lecture_truth.py")


@dataclass(frozen=True)
class Truth:
    """A question's right answer, computed here."""

    said: str  # as the Reveal's words write it: "'animal' (token 2), 0.68", "with attention", "2", "512.3 ± 50"
    right: int | str  # what a student picks (an option's index) or types to be right
    wrong: int | str  # an answer that is not right
    what: str = ""  # a token question: the row's words, "layer 3, head 1"


def truth(step) -> Truth:
    spec = step.answer
    if spec.kind == "choice":
        index = spec.options.index(spec.expected)
        return Truth(spec.expected, index, (index + 1) % len(spec.options))
    if spec.kind == "number":
        value = spec.expected if spec.expected is not None else quantity(step)
        within = f" ± {spec.tolerance:g}" if spec.tolerance else ""
        said = f"{value:g}{within}" if spec.expected is not None else f"{value:.4g}{within}"
        return Truth(said, f"{value:.6g}", f"{value + spec.tolerance + 7:.6g}")
    if spec.kind == "token":
        tokens, _, row = engine_row(step)
        best = int(np.argmax(row))
        what = f"layer {spec.layer}, head {spec.heads[0]}" if len(spec.heads) == 1 else \
            f"layer {spec.layer}, the mean of heads " + ", ".join(map(str, spec.heads[:-1])) + f" and {spec.heads[-1]}"
        return Truth(f"'{tokens[best]}' (token {best}), {row[best]:.2f}", best, (best + 1) % len(tokens), what)
    raise AssertionError(f"the tests know no answer kind {spec.kind!r}: add it to tests/lecture_truth.py")
