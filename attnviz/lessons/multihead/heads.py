"""The reshape that makes heads: (n, d_model) -> (h, n, d_head) -> back, on one layer's real Q.

Shapes: T tokens, C = d_model, nh heads, hs = d_head: C / nh in most models, but a Llama-family config may set
head_dim on its own (then Q is nh·hs wide, not C: W_Q maps C -> nh·hs and W_O maps nh·hs back to C).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import merge_heads, split_heads
from attnviz.engine.models.stack import RopeLayerTrace
from attnviz.errors import AttnvizError

PAPER = {"d_model": 512, "n_heads": 8, "d_head": 64, "d_ff": 2048, "n_layers": 6}  # Vaswani et al. 2017, base


@dataclass
class HeadSplit:
    """Q of one layer as one matrix, cut into heads, and glued back together."""

    q: torch.Tensor  # Q = X W_Q + b_Q (before RoPE in Llama-family models), all heads side by side (T, nh·hs)
    per_head: torch.Tensor  # the same numbers as (nh, T, hs): head h holds columns h·hs .. (h+1)·hs − 1
    merged: torch.Tensor  # per_head glued back (T, nh·hs)
    d_model: int  # the residual stream's width C (equal to nh·hs unless the config sets head_dim)
    n_heads: int
    d_head: int

    @property
    def round_trip_gap(self) -> float:
        """max |merged − q|: 0 exactly, the reshape only moves numbers around."""
        return float((self.merged - self.q).abs().max())

    @property
    def width(self) -> int:
        """nh · hs, the width of Q: what W_Q maps d_model to."""
        return self.n_heads * self.d_head

    def columns_of(self, head: int) -> range:
        return range(head * self.d_head, (head + 1) * self.d_head)


def head_split(res, layer: int) -> HeadSplit:
    """Split and merge the query matrix of `layer` from a run kept with keep=True."""
    trace = layer_trace(res, layer)
    # (1, nh, T, hs): the layer already split it; we glue it back and cut it again. In a RoPE model trace.q is
    # rotated; the plain projection X W_Q is kept as q_before_rope, and that is what the reshape acts on.
    per_head = trace.q_before_rope if isinstance(trace, RopeLayerTrace) else trace.q
    q = merge_heads(per_head)  # (1, T, nh·hs)
    again = split_heads(q, per_head.shape[1])  # (1, nh, T, hs)
    _, nh, _, hs = again.shape
    return HeadSplit(q=q[0], per_head=again[0], merged=merge_heads(again)[0], d_model=int(trace.x_in.shape[-1]),
                     n_heads=nh, d_head=hs)


def layer_trace(res, layer: int):
    if res.traces is None:
        raise AttnvizError("This run kept no intermediates: run the model with keep=True.")
    if not 0 <= layer < len(res.traces):
        raise AttnvizError(f"Layer {layer} does not exist: the model has layers 0 to {len(res.traces) - 1}.")
    return res.traces[layer]
