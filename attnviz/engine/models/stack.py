"""One transformer layer for every stack attnviz runs; its switches are ModelConfig's fields (config.py).

    post-norm (BERT, RoBERTa, DistilBERT, toy, BART):  x = N(x + Attn(x));     x = N(x + MLP(x))
    pre-norm  (GPT-2, Llama, Qwen2, Mistral):           x = x + Attn(N(x));     x = x + MLP(N(x))
    N         LayerNorm, or RMSNorm (cfg.norm)
    Attn      multi-head attention; with cfg.positions == "rope" q and k are rotated by position first, and
              n_kv_heads < n_heads K/V heads are each shared by a group of query heads (GQA)
    MLP       act(x W_1 + b_1) W_2 + b_2, or SwiGLU (act(x W_gate) ⊙ x W_1) W_2 (cfg.mlp)
Weights are stored (in, out) so that every projection reads y = x @ W (+ b).
Shapes: B batch, T new tokens, S keys (T, or more with a KV cache), C = d_model, nh query heads,
nkv K/V heads, hs = d_head, F = MLP width.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from attnviz.engine.attention import merge_heads, repeat_kv, scaled_dot_product_attention_trace
from attnviz.engine.rope import apply_rope

if TYPE_CHECKING:
    from attnviz.engine.models.config import ModelConfig


@dataclass
class LayerWeights:
    """One layer's weights, (in, out). A bias the architecture lacks (cfg.qkv_bias, out_bias, mlp_bias, and every
    RMSNorm's) is None."""

    w_qkv: torch.Tensor  # (C, (nh + 2·nkv)·hs): W_Q | W_K | W_V side by side, one matmul for all three
    b_qkv: torch.Tensor | None  # ((nh + 2·nkv)·hs,)
    w_o: torch.Tensor  # (nh·hs, C)
    b_o: torch.Tensor | None  # (C,)
    ln1_w: torch.Tensor  # (C,) the norm around attention (after it in post-norm, before it in pre-norm)
    ln1_b: torch.Tensor | None
    ln2_w: torch.Tensor  # (C,) the norm around the MLP
    ln2_b: torch.Tensor | None
    w_ff1: torch.Tensor  # (C, F) W_1 (SwiGLU's W_up)
    b_ff1: torch.Tensor | None  # (F,)
    w_ff2: torch.Tensor  # (F, C) W_2 (SwiGLU's W_down)
    b_ff2: torch.Tensor | None  # (C,)
    # SwiGLU's W_gate (C, F), None for a plain FFN. Kept apart from W_1: one fused (C, 2F) product was slower on
    # CPU, and its two halves were strided views that made silu slower still
    w_gate: torch.Tensor | None = None
    b_gate: torch.Tensor | None = None

    def to(self, device) -> LayerWeights:
        return LayerWeights(**{k: None if v is None else v.to(device) for k, v in self.__dict__.items()})

    def per_head(self, cfg: ModelConfig) -> dict[str, torch.Tensor]:
        """W_Q [nh, C, hs], W_K and W_V [nkv, C, hs] (one per K/V head), W_O [nh, hs, C]."""
        return per_head_views(self.w_qkv, self.w_o, cfg.n_heads, cfg.n_kv_heads, cfg.d_head)


def per_head_views(w_qkv: torch.Tensor, w_o: torch.Tensor, nh: int, nkv: int, hs: int) -> dict[str, torch.Tensor]:
    """The fused (C, (nh + 2·nkv)·hs) W_Q | W_K | W_V and W_O (nh·hs, C) as per-head views:
    W_Q [nh, C, hs], W_K and W_V [nkv, C, hs] (one per K/V head; nkv = nh without GQA), W_O [nh, hs, C]."""
    C = w_qkv.shape[0]
    w_q, w_k, w_v = w_qkv.split([nh * hs, nkv * hs, nkv * hs], dim=1)
    return {
        "W_Q": w_q.view(C, nh, hs).transpose(0, 1),  # (nh, C, hs)
        "W_K": w_k.view(C, nkv, hs).transpose(0, 1),  # (nkv, C, hs)
        "W_V": w_v.view(C, nkv, hs).transpose(0, 1),  # (nkv, C, hs)
        "W_O": w_o.view(nh, hs, w_o.shape[1]),  # (nh, hs, C)
    }


@dataclass
class LayerTrace:
    """What one layer computed, for the lesson pages. Per-head tensors are (B, nh, T, ·).

    The raw scores Q Kᵀ are recomputed from q and k when read rather than stored: a second kept
    (B, nh, T, T) tensor per layer made a kept run slower than transformers' forward at 512 tokens.
    """

    x_in: torch.Tensor  # residual stream entering the layer (B, T, C)
    q: torch.Tensor  # (B, nh, T, hs)
    k: torch.Tensor  # (B, nh, S, hs): one per query head (after the GQA repeat, where there is one)
    v: torch.Tensor
    scale: float
    mask: torch.Tensor | None  # bool (T, S) or (B, 1, 1, S)
    weights: torch.Tensor  # softmax(Q Kᵀ · s + M) (B, nh, T, S)
    head_outputs: torch.Tensor  # weights @ V (B, nh, T, hs)
    attn_out: torch.Tensor  # Concat(heads) @ W_O + b_O (B, T, C)
    x_mid: torch.Tensor  # residual stream after the attention sub-layer (B, T, C)
    x_out: torch.Tensor  # residual stream leaving the layer (B, T, C)

    @property
    def scores(self) -> torch.Tensor:
        """Q Kᵀ, unscaled (B, nh, T, S): the same product the layer computed, from the kept q and k."""
        return self.q @ self.k.transpose(-2, -1)


@dataclass
class RopeLayerTrace(LayerTrace):
    """LayerTrace of a layer with RoPE (cfg.positions == "rope"). q and k are after RoPE; k and v are per query
    head, after the GQA repeat (so q @ kᵀ gives each head's scores); the rotations' inputs and the K/V heads as
    cached are kept too."""

    q_before_rope: torch.Tensor  # (B, nh, T, hs)
    k_before_rope: torch.Tensor  # (B, nkv, T, hs): the new tokens' keys only
    k_cached: torch.Tensor  # (B, nkv, S, hs): K after RoPE, one per K/V head (what a KV cache holds)
    v_cached: torch.Tensor  # (B, nkv, S, hs)


ACTIVATIONS = {
    "gelu": lambda x: torch.nn.functional.gelu(x),
    "gelu_new": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_fast": lambda x: 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x))),
    "relu": torch.relu,
    "silu": torch.nn.functional.silu,  # x·σ(x), the Llama family's (SwiGLU's gate)
}


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) · w + b over the feature dimension."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """w · x / sqrt(mean(x²) + eps) over the features, computed in float32 as Llama does."""
    x32 = x.float()
    return w * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, cfg: ModelConfig) -> torch.Tensor:
    """LayerNorm or RMSNorm, as cfg.norm says, with the config's ε."""
    if cfg.norm == "rms":
        return rms_norm(x, w, cfg.ln_eps)
    return layer_norm(x, w, b, cfg.ln_eps)


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    """x W + b, or x W where the architecture has no bias there."""
    return x @ w if b is None else x @ w + b


def mlp(h: torch.Tensor, lw: LayerWeights, cfg: ModelConfig) -> torch.Tensor:
    """FFN(h) = act(h W_1 + b_1) W_2 + b_2, or SwiGLU(h) = (act(h W_gate) ⊙ h W_up) W_down: (B, T, C) -> (B, T, C).

    SwiGLU's gate decides, per feature, how much of h W_up passes."""
    act = ACTIVATIONS[cfg.activation]
    up = linear(h, lw.w_ff1, lw.b_ff1)  # (B, T, F)
    hidden = act(linear(h, lw.w_gate, lw.b_gate)) * up if cfg.mlp == "swiglu" else act(up)  # (B, T, F)
    return linear(hidden, lw.w_ff2, lw.b_ff2)  # (B, T, C)


def attention_sublayer(x, lw: LayerWeights, cfg: ModelConfig, mask, scale, rope=None, cache=None, ablate=None):
    """Multi-head attention of x (B, T, C): 1) project, 2) split heads, 3) rotate q and k (RoPE), 4) cache,
    5) repeat K/V for GQA, 6) attend, 6b) replace ablated heads' outputs, 7) concat · W_O.

    rope: (cos, sin) of the new tokens' positions, each (T, hs), when cfg.positions == "rope".
    cache: a KVCache holding earlier tokens' k, v (generation); the new ones are appended and all attended to.
    ablate: None, or (heads, values): the query heads (a list of indices) whose outputs weights @ V are replaced,
        before W_O, by values (len(heads), hs), the same vector at every position (zeros: zero-ablation; a mean
        over a corpus: mean-ablation), or by values (B, len(heads), T, hs), one per row and position (a sweep that
        knocks out a different head in each block of its rows, and puts the others' outputs back as computed).
        See attnviz.analysis.ablation. The weights themselves are left as computed.
    Returns (out (B, T, C), the AttentionTrace, (q, k before RoPE, k and v as cached, k and v repeated per head)).
    """
    B, T, _ = x.shape
    nh, nkv, hs = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    qkv = linear(x, lw.w_qkv, lw.b_qkv)  # 1) x W_Q | x W_K | x W_V                  (B, T, (nh + 2nkv)·hs)
    q, k, v = qkv.split([nh * hs, nkv * hs, nkv * hs], dim=2)
    q = q.view(B, T, nh, hs).transpose(1, 2)  # 2)                                  (B, nh, T, hs)
    k = k.view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
    v = v.view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
    q_in, k_in = q, k
    if cfg.positions == "rope":  # 3) q' = q·cos + rotate_half(q)·sin: position enters here, nowhere else
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    if cache is not None:
        k, v = cache.append(k, v)  # 4) earlier tokens' keys and values + the new ones  (B, nkv, S, hs)
    k_rep, v_rep = repeat_kv(k, cfg.group_size), repeat_kv(v, cfg.group_size)  # 5) (B, nh, S, hs)
    att = scaled_dot_product_attention_trace(q, k_rep, v_rep, mask=mask, scale=scale)  # 6) per head
    if ablate is not None:  # 6b) head_h := values[h] at every position, for the ablated heads only
        heads, values = ablate
        replaced = att.output.clone()  # (B, nh, T, hs)
        values = values.to(replaced)
        # (len(heads), hs) -> (1, len(heads), 1, hs), broadcast over B and T; (B, len(heads), T, hs) as it is
        replaced[:, heads] = values[None, :, None, :] if values.dim() == 2 else values
        att = dataclasses.replace(att, output=replaced)
    out = linear(merge_heads(att.output), lw.w_o, lw.b_o)  # 7) Concat(head_1 .. head_nh) · W_O   (B, T, C)
    return out, att, (q_in, k_in, k, v, k_rep, v_rep)


def layer_weights(x, lw: LayerWeights, cfg: ModelConfig, mask, scale, rope=None) -> torch.Tensor:
    """softmax(Q Kᵀ · s + M) of one layer (B, nh, T, T), computed as layer_forward computes it, without the
    residual, norm and MLP after it: at 512 tokens the MLP is over half of a layer's work."""
    attended = norm(x, lw.ln1_w, lw.ln1_b, cfg) if cfg.pre_ln else x
    return attention_sublayer(attended, lw, cfg, mask, scale, rope)[1].weights


def layer_forward(x, lw: LayerWeights, cfg: ModelConfig, mask, scale, keep: bool, cache=None, rope=None,
                  ablate=None):
    """One transformer layer: the new residual stream (B, T, C), the attention weights (B, nh, T, S), and, if keep,
    its LayerTrace (a RopeLayerTrace with RoPE). ablate: heads whose outputs are replaced (attention_sublayer);
    the trace's head_outputs are then what W_O received."""
    if cfg.pre_ln:
        attn_out, att, parts = attention_sublayer(norm(x, lw.ln1_w, lw.ln1_b, cfg), lw, cfg, mask, scale, rope, cache,
                                                  ablate)
        x_mid = x + attn_out  # x + Attn(N₁(x))
        x_out = x_mid + mlp(norm(x_mid, lw.ln2_w, lw.ln2_b, cfg), lw, cfg)  # x_mid + MLP(N₂(x_mid))
    else:
        attn_out, att, parts = attention_sublayer(x, lw, cfg, mask, scale, rope, cache, ablate)
        x_mid = norm(x + attn_out, lw.ln1_w, lw.ln1_b, cfg)  # N₁(x + Attn(x))
        x_out = norm(x_mid + mlp(x_mid, lw, cfg), lw.ln2_w, lw.ln2_b, cfg)  # N₂(x_mid + MLP(x_mid))
    trace = None
    if keep:
        q_in, k_in, k_all, v_all, k_rep, v_rep = parts
        common = dict(x_in=x, q=att.q, k=k_rep, v=v_rep, scale=att.scale, mask=att.mask, weights=att.weights,
                      head_outputs=att.output, attn_out=attn_out, x_mid=x_mid, x_out=x_out)
        if cfg.positions == "rope":
            trace = RopeLayerTrace(**common, q_before_rope=q_in, k_before_rope=k_in, k_cached=k_all, v_cached=v_all)
        else:
            trace = LayerTrace(**common)
    return x_out, att.weights, trace


def sliding_window_mask(n: int, start: int, window: int) -> torch.Tensor:
    """Queries start .. start+n-1 may see keys less than `window` positions back (self included): (n, start+n).

    Mistral's rule, key > query - window; combined with the causal mask each query sees `window` keys at most.
    """
    q = torch.arange(start, start + n).unsqueeze(1)  # (n, 1)
    k = torch.arange(start + n).unsqueeze(0)  # (1, start + n)
    return k > q - window


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same): (n_positions, d_model)."""
    pos = torch.arange(n_positions, dtype=torch.float32).unsqueeze(1)  # (P, 1)
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))  # (C/2,)
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
    return pe
