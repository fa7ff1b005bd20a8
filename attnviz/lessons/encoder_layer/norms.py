"""The residual stream over the layers: how long it is, and how much each sub-layer changes it.

Per layer (mean over tokens of per-token L2 norms):
    ‖x‖ entering the layer, ‖MHA(·)‖ what attention adds, ‖FFN(·)‖ what the FFN adds,
    relative change ‖x_out − x_in‖ / ‖x_in‖.
In a post-LN layer a LayerNorm follows each addition, so the stream is rescaled after every update.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.lessons.encoder_layer.steps import layer_steps


@dataclass
class StreamNorms:
    x_in: torch.Tensor  # (L,)
    attn_update: torch.Tensor  # (L,)
    ffn_update: torch.Tensor  # (L,)
    relative_change: torch.Tensor  # (L,)
    x_out_last: float  # ‖x‖ leaving the last layer


def stream_norms(model, res) -> StreamNorms:
    """Every layer of the run `res` (keep=True), recomputed from its weights."""
    per_layer = [layer_steps(model, res, L) for L in range(model.n_layers)]
    mean_norm = lambda t: float(t.norm(dim=-1).mean())  # mean over tokens of ‖row‖₂
    rel = [float(((s.x_out - s.x_in).norm(dim=-1) / s.x_in.norm(dim=-1).clamp_min(1e-12)).mean()) for s in per_layer]
    return StreamNorms(
        x_in=torch.tensor([mean_norm(s.x_in) for s in per_layer]),
        attn_update=torch.tensor([mean_norm(s.attn) for s in per_layer]),
        ffn_update=torch.tensor([mean_norm(s.ffn) for s in per_layer]),
        relative_change=torch.tensor(rel), x_out_last=mean_norm(per_layer[-1].x_out),
    )
