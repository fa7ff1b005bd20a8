"""One measured point of a method's cost: what costs.py measures and each method's cost sentence reads (method.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CostPoint:
    n: int
    seconds: float  # fastest wall time of a few runs
    peak_bytes: int  # most bytes of tensors held at once (attnviz.engine.efficient.measure)
