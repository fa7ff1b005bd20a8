"""What an efficient-attention method is to the page and the lesson: its knobs, its kernel, its count of scored
pairs, its dense mask and its cost sentence, all carried by one Method. Each method is one module in
methods/ and is registered once in methods/__init__.py; nothing else names a method.

Knob values from the page are capped into range here (with a note saying so); the engine itself raises
AttnvizError for values out of range, so nothing silently changes below the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.engine.efficient import shared_qk_attention
from attnviz.lessons.efficient.cost_point import CostPoint


@dataclass(frozen=True)
class Knob:
    """A whole-number control of a method."""

    key: str  # the name in the knobs dict (and, prefixed, the widget key)
    label: str
    low: int
    high: Callable[[int], int]  # the largest sensible value for n tokens
    default: int  # the value asked for when nothing else is known; knob_default(knob, n) is the one for n tokens
    help: str = ""
    choices: Callable[[int], tuple[list[int], int]] | None = None  # n -> (the values offered, the default), if a list
    one_or_even: bool = False  # only 1 or an even number is allowed (Reformer's buckets: half the rotations, negated)
    timing_low: int = 0  # the cost chart never times below this (tiles: smaller ones time Python's loop, not the work)
    timing_note: str = ""  # what the cost chart's caption says when timing_low applies


@dataclass(frozen=True)
class Switch:
    """A choice among named options (drawn as a radio), passed to the kernel in the knobs dict by its key."""

    key: str
    label: str
    options: tuple[str, ...]
    help: str = ""


def _sees_every_key(n: int, knobs: dict) -> None:
    return None


def _never_signed(knobs: dict) -> bool:
    return False


@dataclass(frozen=True)
class Method:
    key: str  # a short name (it goes into the URL)
    title: str
    exact: bool  # True: equals exact attention (with its mask); False: an approximation
    trade: str  # one line: what it gives up for what
    knobs: tuple[Knob, ...]
    run: Callable  # (q, k, v, knobs: dict, scale) -> output (..., n, d_v)
    scores: Callable[[dict, int], int | None]  # (knobs, n) -> the scores q·k its kernel computes (None: it forms none)
    # (knobs the cost chart timed with at the largest n, the method's point there, dense attention's point there)
    #   -> (what it computed and how that compared on this machine, what a GPU kernel would change); see explain.py
    explain: Callable[[dict, CostPoint, CostPoint], tuple[str, str]]
    reference: str = "full"  # what it is compared with: "full", "masked" (its own mask), "shared-qk"
    mask: Callable[[int, dict], torch.Tensor | None] = _sees_every_key  # (n, knobs) -> the dense (n, n) mask it stands for
    switches: tuple[Switch, ...] = ()
    signed: Callable[[dict], bool] = _never_signed  # whether the weights it applies can be negative with these knobs


def _allowed(knob: Knob, value: int, n: int) -> int:
    """value clamped into [low, high(n)], and made 1 or even where the knob asks for it."""
    value = min(max(value, knob.low), max(knob.high(n), knob.low))
    return value - 1 if knob.one_or_even and value > 1 and value % 2 else value


def cap_knobs(method: Method, values: dict, n: int) -> tuple[dict, list[str]]:
    """Knob values clamped into [low, high(n)] (and made 1 or even where asked) -> (values, notes on what changed)."""
    capped, notes = dict(values), []
    for knob in method.knobs:
        raw = int(values.get(knob.key, knob.default))
        value = _allowed(knob, raw, n)
        if value != raw:
            even = ", 1 or even" if knob.one_or_even else ""
            notes.append(f"{knob.label.split(' (')[0]}: {raw} is not allowed for n = {n} "
                         f"(allowed {knob.low} to {max(knob.high(n), knob.low)}{even}), so {value} is used.")
        capped[knob.key] = value
    return capped, notes


def knob_default(knob: Knob, n: int) -> int:
    """The value a knob starts on for n tokens: always allowed at n, so a fresh page warns about nothing.

    A knob with a list of choices starts on its own default (the tile: about n/4, several tiles); the
    others start on their default clamped into [low, high(n)] (and made 1 or even where asked)."""
    if knob.choices is not None:
        return knob.choices(n)[1]
    return _allowed(knob, knob.default, n)


def knob_defaults(method: Method, n: int) -> dict:
    """{knob key: knob_default} for every knob of the method at n tokens."""
    return {knob.key: knob_default(knob, n) for knob in method.knobs}


def reference_output(method: Method, q, k, v, knobs: dict, scale) -> torch.Tensor:
    """What the method is measured against: exact attention (full), its own mask applied densely, or shared-QK."""
    if method.reference == "shared-qk":
        return shared_qk_attention(q, v, scale=scale)
    return scaled_dot_product_attention(q, k, v, mask=method.mask(q.shape[-2], knobs), scale=scale)[0]


def timing_knobs(method: Method, knobs: dict, n: int) -> dict:
    """The knobs the cost chart uses at n tokens: the page's, capped for n (and each at least its timing_low)."""
    capped, _ = cap_knobs(method, knobs, n)
    for knob in method.knobs:
        if knob.timing_low > knob.low:
            capped[knob.key] = min(max(capped[knob.key], knob.timing_low), max(knob.high(n), knob.low))
    return capped


def timing_notes(method: Method) -> list[str]:
    """What the cost chart's caption says about the knobs it times above the page's value."""
    return [knob.timing_note for knob in method.knobs if knob.timing_low > knob.low and knob.timing_note]
