"""The reshape that makes heads: (n, d_model) -> (h, n, d_head) -> back, on one layer's real Q.

Shapes: T tokens, C = d_model, nh heads, hs = d_head = C / nh.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import merge_heads, split_heads
from attnviz.errors import AttnvizError

PAPER = {"d_model": 512, "n_heads": 8, "d_head": 64, "d_ff": 2048, "n_layers": 6}  # Vaswani et al. 2017, base


@dataclass
class HeadSplit:
    """Q of one layer as one matrix, cut into heads, and glued back together."""

    q: torch.Tensor  # Q = X W_Q + b_Q, all heads side by side (T, C)
    per_head: torch.Tensor  # the same numbers as (nh, T, hs): head h holds columns h·hs .. (h+1)·hs − 1
    merged: torch.Tensor  # per_head glued back (T, C)
    d_model: int
    n_heads: int
    d_head: int

    @property
    def round_trip_gap(self) -> float:
        """max |merged − q|: 0 exactly, the reshape only moves numbers around."""
        return float((self.merged - self.q).abs().max())

    def columns_of(self, head: int) -> range:
        return range(head * self.d_head, (head + 1) * self.d_head)


def head_split(res, layer: int) -> HeadSplit:
    """Split and merge the query matrix of `layer` from a run kept with keep=True."""
    trace = layer_trace(res, layer)
    per_head = trace.q  # (1, nh, T, hs): the layer already split it; we glue it back and cut it again
    q = merge_heads(per_head)  # (1, T, C)
    again = split_heads(q, per_head.shape[1])  # (1, nh, T, hs)
    _, nh, _, hs = again.shape
    return HeadSplit(q=q[0], per_head=again[0], merged=merge_heads(again)[0], d_model=nh * hs, n_heads=nh, d_head=hs)


def layer_trace(res, layer: int):
    if res.traces is None:
        raise AttnvizError("This run kept no intermediates: run the model with keep=True.")
    if not 0 <= layer < len(res.traces):
        raise AttnvizError(f"Layer {layer} does not exist: the model has layers 0 to {len(res.traces) - 1}.")
    return res.traces[layer]
