"""The Llama-style decoder layer (Llama, Qwen2, Mistral): pre-norm, RMSNorm, RoPE, GQA, SwiGLU.

    x = x + Attn(RMSNorm(x))      queries and keys rotated by RoPE; n_kv_heads K/V heads shared by groups
    x = x + MLP(RMSNorm(x))       MLP(h) = W_down (silu(h W_gate) ⊙ h W_up)
No positions are added to the embeddings: RoPE puts position into every query·key product instead.
Weights are stored (in, out) so that every projection reads y = x @ W (+ b).
Shapes: B batch, T new tokens, S keys (T, or more with a KV cache), C = d_model, nh query heads,
nkv K/V heads, hs = d_head (from the config; not always C / nh), F = MLP width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import merge_heads, repeat_kv, scaled_dot_product_attention_trace
from attnviz.engine.models.stack import LayerTrace, per_head_views
from attnviz.engine.rope import apply_rope


@dataclass
class RopeConfig:
    """The facts a Llama-family stack needs; attribute names shared with StackConfig where they mean the same."""

    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    d_ff: int
    ln_eps: float  # RMSNorm's epsilon
    max_positions: int
    inv_freq: torch.Tensor  # RoPE's θ_i (hs/2,)
    rope_type: str = "default"
    windows: tuple[int | None, ...] = ()  # per layer: a sliding window of that many keys (self included), or None
    causal: bool = True
    pre_ln: bool = True
    activation: str = "silu"

    @property
    def group_size(self) -> int:
        """Query heads per K/V head (1 = plain multi-head attention, nh = multi-query)."""
        return self.n_heads // self.n_kv_heads


@dataclass
class RopeLayerWeights:
    w_qkv: torch.Tensor  # (C, (nh + 2·nkv)·hs): W_Q | W_K | W_V side by side; K and V are narrower under GQA
    b_qkv: torch.Tensor | None  # Qwen2 (and Llama with attention_bias) have q/k/v biases
    w_o: torch.Tensor  # (nh·hs, C)
    b_o: torch.Tensor | None  # Llama with attention_bias only
    norm1: torch.Tensor  # (C,) RMSNorm weight before attention (input_layernorm)
    norm2: torch.Tensor  # (C,) RMSNorm weight before the MLP (post_attention_layernorm)
    # W_gate and W_up kept apart (C, F) each: one fused (C, 2F) product was slower on CPU, and its two
    # halves were strided views that made silu slower still
    w_gate: torch.Tensor
    b_gate: torch.Tensor | None  # Llama with mlp_bias only
    w_up: torch.Tensor
    b_up: torch.Tensor | None
    w_down: torch.Tensor  # (F, C)
    b_down: torch.Tensor | None

    def to(self, device) -> RopeLayerWeights:
        return RopeLayerWeights(**{k: None if v is None else v.to(device) for k, v in self.__dict__.items()})

    def per_head(self, cfg: RopeConfig) -> dict[str, torch.Tensor]:
        """W_Q [nh, C, hs], W_K and W_V [nkv, C, hs] (one per K/V head), W_O [nh, hs, C]."""
        return per_head_views(self.w_qkv, self.w_o, cfg.n_heads, cfg.n_kv_heads, cfg.d_head)


@dataclass
class RopeLayerTrace(LayerTrace):
    """LayerTrace for a RoPE model. q and k are after RoPE; k and v are per query head, after the GQA
    repeat (so q @ kᵀ gives each head's scores); the rotations' inputs and the K/V heads as cached are kept too."""

    q_before_rope: torch.Tensor  # (B, nh, T, hs)
    k_before_rope: torch.Tensor  # (B, nkv, T, hs): the new tokens' keys only
    k_cached: torch.Tensor  # (B, nkv, S, hs): K after RoPE, one per K/V head (what a KV cache holds)
    v_cached: torch.Tensor  # (B, nkv, S, hs)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """w · x / sqrt(mean(x²) + eps) over the features, computed in float32 as Llama does."""
    x32 = x.float()
    return w * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return x @ w if b is None else x @ w + b


def swiglu_mlp(h: torch.Tensor, lw: RopeLayerWeights) -> torch.Tensor:
    """W_down (silu(h W_gate) ⊙ (h W_up)): the gate decides, per feature, how much of h W_up passes."""
    gate, up = linear(h, lw.w_gate, lw.b_gate), linear(h, lw.w_up, lw.b_up)  # each (B, T, F)
    return linear(torch.nn.functional.silu(gate) * up, lw.w_down, lw.b_down)


def rope_attention(x, lw: RopeLayerWeights, cfg: RopeConfig, cos, sin, mask, scale, cache=None):
    """1) project, 2) split heads, 3) rotate q and k, 4) cache, 5) repeat K/V for GQA, 6) attend, 7) concat · W_O."""
    B, T, _ = x.shape
    nh, nkv, hs = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    qkv = linear(x, lw.w_qkv, lw.b_qkv)  # 1)                                       (B, T, (nh + 2nkv)·hs)
    q, k, v = qkv.split([nh * hs, nkv * hs, nkv * hs], dim=2)
    q = q.view(B, T, nh, hs).transpose(1, 2)  # 2)                                  (B, nh, T, hs)
    k = k.view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
    v = v.view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
    q_rot, k_rot = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # 3) q' = q·cos + rotate_half(q)·sin
    k_all, v_all = (k_rot, v) if cache is None else cache.append(k_rot, v)  # 4) (B, nkv, S, hs)
    k_rep, v_rep = repeat_kv(k_all, cfg.group_size), repeat_kv(v_all, cfg.group_size)  # 5) (B, nh, S, hs)
    att = scaled_dot_product_attention_trace(q_rot, k_rep, v_rep, mask=mask, scale=scale)  # 6)
    out = linear(merge_heads(att.output), lw.w_o, lw.b_o)  # 7) Concat(heads) · W_O   (B, T, C)
    return out, att, (q, k, q_rot, k_all, v_all, k_rep, v_rep)


def rope_layer_weights(x, lw: RopeLayerWeights, cfg: RopeConfig, cos, sin, mask, scale) -> torch.Tensor:
    """One decoder layer's attention weights (B, nh, T, T) as rope_layer_forward computes them, without the
    residual and the MLP after them (see stack.layer_weights)."""
    return rope_attention(rms_norm(x, lw.norm1, cfg.ln_eps), lw, cfg, cos, sin, mask, scale)[1].weights


def rope_layer_forward(x, lw: RopeLayerWeights, cfg: RopeConfig, cos, sin, mask, scale, keep: bool, cache=None):
    """One decoder layer; returns the new residual stream, the attention weights (B, nh, T, S) and a trace."""
    attn_out, att, parts = rope_attention(rms_norm(x, lw.norm1, cfg.ln_eps), lw, cfg, cos, sin, mask, scale, cache)
    x_mid = x + attn_out  # residual
    x_out = x_mid + swiglu_mlp(rms_norm(x_mid, lw.norm2, cfg.ln_eps), lw)  # residual
    trace = None
    if keep:
        q, k, q_rot, k_all, v_all, k_rep, v_rep = parts
        trace = RopeLayerTrace(
            x_in=x, q=q_rot, k=k_rep, v=v_rep, scale=att.scale, mask=att.mask, weights=att.weights,
            head_outputs=att.output, attn_out=attn_out, x_mid=x_mid, x_out=x_out,
            q_before_rope=q, k_before_rope=k, k_cached=k_all, v_cached=v_all,
        )
    return x_out, att.weights, trace
