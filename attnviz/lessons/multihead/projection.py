"""Concat(heads) · W_O = Σ_h head_h · W_Oʰ on a real layer, and what each head adds to the output.

W_O (C, C) is stored (in, out); its rows come in nh blocks of hs, block h = W_Oʰ (hs, C).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import merge_heads, per_head_output_projections
from attnviz.lessons.multihead.heads import layer_trace


@dataclass
class OutputProjection:
    via_concat: torch.Tensor  # Concat(head_0 .. head_nh−1) · W_O (T, C), no bias
    per_head: torch.Tensor  # head_h · W_Oʰ for each head (nh, T, C)
    bias: torch.Tensor  # b_O (C,)
    attn_out: torch.Tensor  # the layer's own attention output Concat · W_O + b_O, from the trace (T, C)

    @property
    def via_sum(self) -> torch.Tensor:
        """Σ_h head_h · W_Oʰ (T, C)."""
        return self.per_head.sum(dim=0)

    @property
    def gap(self) -> float:
        """max |Concat · W_O − Σ_h head_h · W_Oʰ| over every token and feature: float32 rounding only."""
        return float((self.via_concat - self.via_sum).abs().max())

    @property
    def trace_gap(self) -> float:
        """max |Σ_h head_h · W_Oʰ + b_O − the layer's attention output|."""
        return float((self.via_sum + self.bias - self.attn_out).abs().max())

    @property
    def contribution_norms(self) -> torch.Tensor:
        """‖head_h · W_Oʰ‖₂ for each head and token (nh, T): how much each head adds to each token's output."""
        return self.per_head.norm(dim=-1)

    @property
    def contribution_shares(self) -> torch.Tensor:
        """Each head's share of the per-token sum of those norms (nh, T); columns sum to 1."""
        norms = self.contribution_norms
        return norms / norms.sum(dim=0, keepdim=True).clamp_min(1e-12)


def output_projection(model, res, layer: int) -> OutputProjection:
    """Both ways of applying W_O to `layer`'s head outputs, from a run kept with keep=True."""
    trace = layer_trace(res, layer)
    lw = model.layers[layer]
    w_o = lw.w_o.detach().float().cpu()  # (C, C)
    heads = trace.head_outputs  # (1, nh, T, hs)
    return OutputProjection(
        via_concat=(merge_heads(heads) @ w_o)[0],  # (1, T, C) @ (C, C) -> (T, C)
        per_head=per_head_output_projections(heads, w_o)[0],  # (nh, T, C)
        bias=lw.b_o.detach().float().cpu(), attn_out=trace.attn_out[0],
    )
