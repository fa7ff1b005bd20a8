"""Scaled dot-product attention and multi-head split/merge, written out step by step.

Conventions (as in TransformerLens):
    every pattern is [..., query_pos, key_pos]; per-head tensors are (B, nh, T, hs)
    B = batch, nh = number of heads, T = tokens, hs = head size (d_head), C = d_model = nh * hs.
A mask is boolean and True means "this query may attend to this key".

Fully masked rows: a query row whose mask forbids every key has nothing to average. We follow
PyTorch's SDPA and give such a row zero weights and therefore a zero output (never NaN). The
row's masked scores stay -inf, which is what the app draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError

MAX_SCALE = 1000.0


@dataclass
class AttentionTrace:
    """Every intermediate of one scaled dot-product attention, for showing the math.

    q and k are kept (they are small: n·d_k each) and the raw scores Q Kᵀ, the scaled and the masked
    scores are recomputed from them on request, so keeping a trace costs the forward pass no n × n work.
    """

    q: torch.Tensor  # (..., n_q, d_k)
    k: torch.Tensor  # (..., n_k, d_k)
    scale: float  # the factor the scores are multiplied by
    mask: torch.Tensor | None  # bool, True = may attend     broadcastable to (..., n_q, n_k)
    weights: torch.Tensor  # softmax(scaled + M)             (..., n_q, n_k)
    output: torch.Tensor  # weights @ V                      (..., n_q, d_v)

    @property
    def scores(self) -> torch.Tensor:
        """Q Kᵀ, unscaled (..., n_q, n_k)."""
        return self.q @ self.k.transpose(-2, -1)

    @property
    def scaled_scores(self) -> torch.Tensor:
        return self.scores * self.scale

    @property
    def masked_scores(self) -> torch.Tensor:
        """scaled scores + M, where M is 0 where allowed and -inf where forbidden."""
        if self.mask is None:
            return self.scaled_scores
        return self.scaled_scores.masked_fill(~self.mask, float("-inf"))


def resolve_scale(scale: bool | float | None, d_k: int) -> float:
    """The factor the scores are multiplied by: None/True -> 1/sqrt(d_k), False -> 1, float -> itself."""
    if scale is None or scale is True:
        return 1.0 / math.sqrt(d_k)
    if scale is False:
        return 1.0
    try:
        factor = float(scale)
    except (TypeError, ValueError):
        raise AttnvizError(f"scale must be True, False or a number, not {scale!r}.") from None
    if not math.isfinite(factor) or abs(factor) > MAX_SCALE:
        # beyond this float32 scores overflow to inf and the softmax would turn them into NaN
        raise AttnvizError(f"The scale factor must be a number between -{MAX_SCALE:g} and {MAX_SCALE:g}, not {factor:g}.")
    return factor


def is_standard_scale(scale: float, d_k: int) -> bool:
    """Whether a resolved factor is resolve_scale(True, d_k) = 1/sqrt(d_k), the scaling a model is trained with
    (to float32 rounding: a run's factor has been through a tensor)."""
    return math.isclose(scale, 1.0 / math.sqrt(d_k), rel_tol=1e-6)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """softmax over keys of the scores with forbidden keys removed; fully masked rows give zeros."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return softmax_of_masked(scores.masked_fill(~mask, float("-inf")), mask)


def softmax_of_masked(masked: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """softmax of scores already holding -inf where `mask` forbids; fully masked rows give zeros."""
    weights = torch.softmax(masked, dim=-1)
    if bool(mask.any(dim=-1).all()):  # every query keeps a key (causal masks always do): no row can be 0/0
        return weights
    # A row that is all -inf softmaxes to NaN (0/0): the policy above makes it zeros instead.
    return weights.nan_to_num(0.0)


def scaled_dot_product_attention_trace(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: bool | float | None = None,
) -> AttentionTrace:
    """Attention(Q, K, V) = softmax(Q Kᵀ · s + M) V, keeping each step.

    q (..., n_q, d_k), k (..., n_k, d_k), v (..., n_k, d_v); mask bool broadcastable to (..., n_q, n_k).
    """
    check_qkv(q, k, v)
    mask = check_mask(mask, q.shape[-2], k.shape[-2])
    s = resolve_scale(scale, q.shape[-1])
    # 1) + 2) (Q·s) Kᵀ: scaling Q (n·d_k numbers) rather than the product (n·n) gives the same scaled
    # scores up to float rounding, one n × n pass sooner. The trace recomputes the unscaled Q Kᵀ on request.
    scaled = (q * s) @ k.transpose(-2, -1)  # (..., n_q, n_k)
    if mask is None:
        weights = torch.softmax(scaled, dim=-1)  # 4) softmax over keys  (..., n_q, n_k)
    else:
        bias = additive_mask(mask, scaled.dtype)  # 3) M: 0 where allowed, -inf where forbidden; mask-sized, not per head
        if torch.broadcast_shapes(scaled.shape, bias.shape) == scaled.shape:
            scaled += bias  # in place: `scaled` is a fresh tensor of ours (an add is cheaper than masked_fill_)
        else:  # a mask with more leading dims than the scores: a new, broadcast tensor
            scaled = scaled + bias
        weights = softmax_of_masked(scaled, mask)  # 4) softmax over keys  (..., n_q, n_k)
    output = weights @ v  # 5) weighted sum of values                 (..., n_q, d_v)
    return AttentionTrace(q=q, k=k, scale=s, mask=mask, weights=weights, output=output)


def additive_mask(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """M as a float tensor of the mask's shape: 0 where the bool mask allows, -inf where it forbids."""
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))


def scaled_dot_product_attention(q, k, v, mask=None, scale=None):
    """(output, weights) of softmax(Q Kᵀ · scale + M) V. See `scaled_dot_product_attention_trace`."""
    trace = scaled_dot_product_attention_trace(q, k, v, mask=mask, scale=scale)
    return trace.output, trace.weights


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() < 2:
            raise AttnvizError(f"{name} must be a tensor with at least 2 dimensions (tokens, features).")
    if q.shape[-1] != k.shape[-1]:
        raise AttnvizError(f"q and k need the same last dimension d_k, got {q.shape[-1]} and {k.shape[-1]}.")
    if k.shape[-2] != v.shape[-2]:
        raise AttnvizError(f"k and v need the same number of keys, got {k.shape[-2]} and {v.shape[-2]}.")


def check_mask(mask, n_q: int, n_k: int) -> torch.Tensor | None:
    """The mask as a bool tensor whose last two dims are (n_q, n_k), or a clear error."""
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        raise AttnvizError("A mask must be a boolean tensor (True = may attend) or None.")
    if mask.dtype != torch.bool:
        raise AttnvizError(f"A mask must be boolean (True = may attend), got dtype {mask.dtype}.")
    if mask.dim() < 2 or tuple(mask.shape[-2:]) not in {(n_q, n_k), (1, n_k), (n_q, 1), (1, 1)}:
        raise AttnvizError(
            f"The mask's last two dimensions must be (queries, keys) = ({n_q}, {n_k}), got {tuple(mask.shape)}."
        )
    return mask


# ---- multi-head split and merge ------------------------------------------------------------


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, nh, T, hs): each head sees its own slice of the features."""
    B, T, C = x.shape
    hs = C // n_heads
    return x.view(B, T, n_heads, hs).transpose(1, 2)  # (B, nh, T, hs)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, nh, T, hs) -> (B, T, C): concatenate the heads' outputs side by side."""
    B, nh, T, hs = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hs)  # (B, T, C)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Grouped-query attention: (B, n_kv, T, hs) -> (B, n_kv · n_rep, T, hs), each K/V head serving
    n_rep consecutive query heads (query head h reads K/V head h // n_rep), as Llama does."""
    if n_rep == 1:
        return x
    return x.repeat_interleave(n_rep, dim=1)  # (B, n_kv * n_rep, T, hs)


def per_head_output_projections(head_outputs: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """head_h · W_Oʰ for each head: (B, nh, T, hs), W_O (C, C) stored (in, out) -> (B, nh, T, C).

    W_O's rows come in blocks of hs, one block per head, so Concat(heads) · W_O = Σ_h head_h · W_Oʰ.
    """
    nh, hs = head_outputs.shape[1], head_outputs.shape[3]
    w_o_per_head = w_o.view(nh, hs, w_o.shape[1])  # (nh, hs, C)
    return torch.einsum("bhts,hsc->bhtc", head_outputs, w_o_per_head)  # (B, nh, T, C)
