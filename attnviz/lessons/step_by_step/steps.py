"""One head of one layer, every intermediate from the input X to the layer's attention output.

The numbers come from a `model.run(..., keep=True)` trace, so the step-by-step page shows what the
model itself computed; only X (the attention's input) and the per-head weight slices are re-derived.
In a Llama-family model (RoPE, GQA) Q and K are rotated by position between X W and Q Kᵀ: q and k are the
rotated ones (what the scores use), q_before and k_before the projections before the turn, and the query
head h reads K/V head h // (nh / nkv).
Shapes: T tokens, C = d_model, nh heads, hs = d_head (C / nh, unless a Llama-family config sets it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from attnviz.engine.attention import per_head_output_projections
from attnviz.engine.models.stack import norm
from attnviz.errors import AttnvizError


@dataclass
class HeadSteps:
    """softmax(Q Kᵀ · s + M) V for one head, then Concat(heads) · W_O + b_O for the whole layer."""

    layer: int
    head: int
    n_heads: int
    labels: list[str]  # token labels, one per row
    x: torch.Tensor  # the attention's input X (T, C): the residual stream, LayerNormed first in pre-LN models
    w_q: torch.Tensor  # W_Qʰ (C, hs); likewise w_k, w_v
    w_k: torch.Tensor
    w_v: torch.Tensor
    q: torch.Tensor  # Q = X W_Qʰ + b_Qʰ  (T, hs); after RoPE in a RoPE model
    k: torch.Tensor  # K = X W_Kʰ + b_Kʰ  (T, hs); after RoPE in a RoPE model
    v: torch.Tensor  # V = X W_Vʰ + b_Vʰ  (T, hs)
    scores: torch.Tensor  # Q Kᵀ (T, T)
    scale: float  # s: 1/√d_k, 1, or the chosen factor
    allowed: torch.Tensor  # bool (T, T), True = may attend (all True without a mask)
    weights: torch.Tensor  # softmax(Q Kᵀ · s + M) (T, T)
    head_out: torch.Tensor  # weights · V (T, hs)
    concat: torch.Tensor  # Concat(head_1 .. head_nh) (T, nh·hs)
    w_o: torch.Tensor  # (nh·hs, C) stored (in, out); rows h·hs .. (h+1)·hs are W_Oʰ
    b_o: torch.Tensor  # (C,); zeros for a model without one
    attn_out: torch.Tensor  # Concat · W_O + b_O (T, C)
    masked: bool  # whether any mask applied at all
    q_before: torch.Tensor | None = None  # RoPE models: Q = X W_Qʰ (+ b) before the rotation (T, hs)
    k_before: torch.Tensor | None = None  # RoPE models: K of K/V head kv_head before the rotation (T, hs)
    kv_head: int | None = None  # the K/V head this query head reads: head // (nh / nkv)
    n_kv_heads: int | None = None

    @property
    def rope(self) -> bool:
        return self.q_before is not None

    @cached_property
    def per_head_projections(self) -> torch.Tensor:
        """head_h · W_Oʰ for every head (nh, T, C): made when first read (Step by step's W_O step), since at 512
        tokens it is 150 M multiply-adds that the explorer's 'why this weight' never needs."""
        T, hs = self.concat.shape[0], self.q.shape[-1]
        heads = self.concat.view(T, self.n_heads, hs).transpose(0, 1)  # (T, nh·hs) -> (nh, T, hs)
        return per_head_output_projections(heads[None], self.w_o)[0]  # (nh, T, C)

    @property
    def d_head(self) -> int:
        return self.q.shape[-1]

    @property
    def scaled(self) -> torch.Tensor:
        """Q Kᵀ · s (T, T)."""
        return self.scores * self.scale

    @property
    def masked_scores(self) -> torch.Tensor:
        """Q Kᵀ · s + M, with M = 0 where allowed and -inf where not (T, T)."""
        return self.scaled.masked_fill(~self.allowed, float("-inf"))


def attention_input(model, trace, layer: int) -> torch.Tensor:
    """X as the attention sees it (T, C): post-LN models attend to the residual stream itself, pre-LN
    models to its LayerNorm (GPT-2) or its RMSNorm (Llama, Qwen2, Mistral)."""
    x = trace.x_in[0].cpu()  # (T, C)
    if model.cfg.pre_ln:  # LayerNorm (GPT-2) or RMSNorm x / √(mean x² + ε) · g (Llama family), as cfg.norm says
        lw = model.layers[layer]
        x = norm(x, lw.ln1_w.cpu(), None if lw.ln1_b is None else lw.ln1_b.cpu(), model.cfg)
    return x


def head_steps(model, res, layer: int, head: int) -> HeadSteps:
    """Every step of `head` in `layer`, from a RunResult made with keep=True."""
    if res.traces is None:
        raise AttnvizError("This run kept no intermediates: run the model with keep=True.")
    if not 0 <= layer < len(res.traces):
        raise AttnvizError(f"Layer {layer} does not exist: the model has layers 0 to {len(res.traces) - 1}.")
    if not 0 <= head < model.n_heads:
        raise AttnvizError(f"Head {head} does not exist: the model has heads 0 to {model.n_heads - 1}.")
    t = res.traces[layer]
    T = t.q.shape[2]
    per_head = model.per_head_weights(layer)  # W_Q/W_K/W_V (nh, C, hs), W_O (nh, hs, C)
    lw = model.layers[layer]
    allowed = torch.ones(T, T, dtype=torch.bool) if t.mask is None else t.mask.cpu().bool().broadcast_to(T, T)
    concat = t.head_outputs[0].transpose(0, 1).reshape(T, -1)  # (nh, T, hs) -> (T, nh·hs)
    w_o = lw.w_o.cpu()  # (nh·hs, C)
    b_o = torch.zeros(w_o.shape[1]) if lw.b_o is None else lw.b_o.cpu()  # (C,)
    rope = {}
    if model.cfg.positions == "rope":  # Llama family: q and k in the trace are after RoPE; keep what was rotated
        kv = head // (model.n_heads // model.n_kv_heads)  # query heads h·r .. h·r + r − 1 share K/V head h
        rope = {"q_before": t.q_before_rope[0, head].cpu(), "k_before": t.k_before_rope[0, kv].cpu(), "kv_head": kv,
                "n_kv_heads": model.n_kv_heads}
    return HeadSteps(
        layer=layer, head=head, n_heads=model.n_heads, labels=list(res.labels), x=attention_input(model, t, layer),
        w_q=per_head["W_Q"][head], w_k=per_head["W_K"][head], w_v=per_head["W_V"][head],
        q=t.q[0, head], k=t.k[0, head], v=t.v[0, head], scale=float(t.scale),
        scores=t.q[0, head] @ t.k[0, head].transpose(0, 1),  # this head's Q Kᵀ (T, T), not every head's
        allowed=allowed, weights=t.weights[0, head], head_out=t.head_outputs[0, head],
        concat=concat, w_o=w_o, b_o=b_o, attn_out=t.attn_out[0], masked=t.mask is not None, **rope,
    )


@dataclass
class PairDetail:
    """What happens between query i and key j: q_i · k_j, scaled, masked, and the softmax of row i."""

    i: int
    j: int
    q_i: torch.Tensor  # (hs,)
    k_j: torch.Tensor  # (hs,)
    products: torch.Tensor  # q_im · k_jm for each feature m (hs,)
    dot: float  # q_i · k_j = Σ_m q_im k_jm, as the model computed it (Q Kᵀ)[i, j]
    scale: float
    scaled: float  # dot · s
    allowed: bool  # M_ij = 0 (True) or -inf (False)
    row: torch.Tensor  # row i of Q Kᵀ · s + M (T,), -inf where masked
    weight: float  # softmax(row)[j] as the model computed it


def pair_detail(steps: HeadSteps, i: int, j: int) -> PairDetail:
    T = steps.q.shape[0]
    for name, idx in (("query", i), ("key", j)):
        if not 0 <= idx < T:
            raise AttnvizError(f"The {name} index {idx} is out of range: this text has tokens 0 to {T - 1}.")
    q_i, k_j = steps.q[i], steps.k[j]  # (hs,) each
    scaled = steps.scores[i] * steps.scale  # row i of Q Kᵀ · s (T,): one row, not the whole (T, T) matrix
    return PairDetail(
        i=i, j=j, q_i=q_i, k_j=k_j, products=q_i * k_j, dot=float(steps.scores[i, j]), scale=steps.scale,
        scaled=float(scaled[j]), allowed=bool(steps.allowed[i, j]),
        row=scaled.masked_fill(~steps.allowed[i], float("-inf")), weight=float(steps.weights[i, j]),
    )


def output_projection_gap(steps: HeadSteps, i: int) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Row i of Concat · W_O and of Σ_h head_h · W_Oʰ (both (C,), no bias), and their max |difference|.

    W_O's rows come in one block of hs per head, so the concatenation's product splits into a sum over heads.
    """
    via_concat = steps.concat[i] @ steps.w_o  # (nh·hs,) @ (nh·hs, C) -> (C,)
    via_heads = steps.per_head_projections[:, i].sum(dim=0)  # (nh, C) -> (C,)
    return via_concat, via_heads, float((via_concat - via_heads).abs().max())
