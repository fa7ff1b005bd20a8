"""A from-scratch transformer layer stack: attention, residual, LayerNorm, feed-forward.

Two arrangements cover the families we load:
    post-LN (BERT, RoBERTa, DistilBERT, toy):  x = LN(x + MHA(x));   x = LN(x + FFN(x))
    pre-LN  (GPT-2):                           x = x + MHA(LN(x));   x = x + FFN(LN(x))
Weights are stored (in, out) so that every projection reads y = x @ W + b.
Shapes: B batch, T tokens, C = d_model, nh heads, hs = d_head = C / nh, F = FFN width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from attnviz.engine.attention import merge_heads, scaled_dot_product_attention_trace, split_heads


@dataclass
class LayerWeights:
    w_qkv: torch.Tensor  # (C, 3C): W_Q | W_K | W_V side by side, one matmul for all three
    b_qkv: torch.Tensor  # (3C,)
    w_o: torch.Tensor  # (C, C)
    b_o: torch.Tensor  # (C,)
    ln1_w: torch.Tensor  # LayerNorm around attention (after it in post-LN, before it in pre-LN)
    ln1_b: torch.Tensor
    ln2_w: torch.Tensor  # LayerNorm around the FFN
    ln2_b: torch.Tensor
    w_ff1: torch.Tensor  # (C, F)
    b_ff1: torch.Tensor  # (F,)
    w_ff2: torch.Tensor  # (F, C)
    b_ff2: torch.Tensor  # (C,)

    def to(self, device: torch.device) -> LayerWeights:
        return LayerWeights(**{k: v.to(device) for k, v in self.__dict__.items()})

    def per_head(self, n_heads: int) -> dict[str, torch.Tensor]:
        """W_Q, W_K, W_V as [n_heads, d_model, d_head] and W_O as [n_heads, d_head, d_model]."""
        C = self.w_o.shape[0]
        return per_head_views(self.w_qkv, self.w_o, n_heads, n_heads, C // n_heads)


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
    k: torch.Tensor
    v: torch.Tensor
    scale: float
    mask: torch.Tensor | None  # bool (T, T) or (B, 1, 1, T)
    weights: torch.Tensor  # softmax(Q Kᵀ · s + M) (B, nh, T, T)
    head_outputs: torch.Tensor  # weights @ V (B, nh, T, hs)
    attn_out: torch.Tensor  # Concat(heads) @ W_O + b_O (B, T, C)
    x_mid: torch.Tensor  # residual stream after the attention sub-layer (B, T, C)
    x_out: torch.Tensor  # residual stream leaving the layer (B, T, C)

    @property
    def scores(self) -> torch.Tensor:
        """Q Kᵀ, unscaled (B, nh, T, T): the same product the layer computed, from the kept q and k."""
        return self.q @ self.k.transpose(-2, -1)


ACTIVATIONS = {
    "gelu": lambda x: torch.nn.functional.gelu(x),
    "gelu_new": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_fast": lambda x: 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x))),
    "relu": torch.relu,
}


@dataclass
class StackConfig:
    n_layers: int
    n_heads: int
    d_model: int
    pre_ln: bool  # GPT-2 style; False = BERT style post-LN
    activation: str
    ln_eps: float
    causal: bool  # a decoder: the causal mask is part of the architecture, always applied
    max_positions: int
    d_head: int = field(init=False)

    def __post_init__(self):
        self.d_head = self.d_model // self.n_heads


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) · w + b over the feature dimension."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def attention_sublayer(x, lw: LayerWeights, cfg: StackConfig, mask, scale, cache=None):
    """Multi-head attention of x (B, T, C): 1) project, 2) split, 3) attend, 4) concat, 5) W_O.

    cache: a KVCache holding earlier tokens' k, v (generation); the new ones are appended and all attended to.
    """
    C = cfg.d_model
    qkv = x @ lw.w_qkv + lw.b_qkv  # 1) Q, K, V = x W_Q, x W_K, x W_V        (B, T, 3C)
    q, k, v = qkv.split(C, dim=2)  # each (B, T, C)
    q, k, v = (split_heads(t, cfg.n_heads) for t in (q, k, v))  # 2) (B, nh, T, hs)
    if cache is not None:
        k, v = cache.append(k, v)  # earlier tokens' keys and values + the new ones (B, nh, S, hs)
    att = scaled_dot_product_attention_trace(q, k, v, mask=mask, scale=scale)  # 3) per head
    concat = merge_heads(att.output)  # 4) Concat(head_1 .. head_nh)         (B, T, C)
    out = concat @ lw.w_o + lw.b_o  # 5) · W_O                                (B, T, C)
    return out, q, k, v, att


def layer_weights(x, lw: LayerWeights, cfg: StackConfig, mask, scale) -> torch.Tensor:
    """softmax(Q Kᵀ · s + M) of one layer (B, nh, T, T), computed as layer_forward computes it, without the
    residual, LayerNorm and FFN after it: at 512 tokens the FFN is over half of a layer's work."""
    attended = layer_norm(x, lw.ln1_w, lw.ln1_b, cfg.ln_eps) if cfg.pre_ln else x
    return attention_sublayer(attended, lw, cfg, mask, scale)[4].weights


def layer_forward(x, lw: LayerWeights, cfg: StackConfig, mask, scale, keep: bool, cache=None):
    """One transformer layer; returns the new residual stream and, if keep, its LayerTrace."""
    act = ACTIVATIONS[cfg.activation]
    if cfg.pre_ln:
        attn_out, q, k, v, att = attention_sublayer(layer_norm(x, lw.ln1_w, lw.ln1_b, cfg.ln_eps), lw, cfg, mask, scale, cache)
        x_mid = x + attn_out  # residual
        h = layer_norm(x_mid, lw.ln2_w, lw.ln2_b, cfg.ln_eps)
        x_out = x_mid + (act(h @ lw.w_ff1 + lw.b_ff1) @ lw.w_ff2 + lw.b_ff2)  # FFN(x) = act(x W1 + b1) W2 + b2
    else:
        attn_out, q, k, v, att = attention_sublayer(x, lw, cfg, mask, scale, cache)
        x_mid = layer_norm(x + attn_out, lw.ln1_w, lw.ln1_b, cfg.ln_eps)  # LN(x + MHA(x))
        ffn = act(x_mid @ lw.w_ff1 + lw.b_ff1) @ lw.w_ff2 + lw.b_ff2
        x_out = layer_norm(x_mid + ffn, lw.ln2_w, lw.ln2_b, cfg.ln_eps)  # LN(x + FFN(x))
    trace = None
    if keep:
        trace = LayerTrace(
            x_in=x, q=q, k=k, v=v, scale=att.scale, mask=att.mask, weights=att.weights,
            head_outputs=att.output, attn_out=attn_out, x_mid=x_mid, x_out=x_out,
        )
    return x_out, att.weights, trace


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same): (n_positions, d_model)."""
    pos = torch.arange(n_positions, dtype=torch.float32).unsqueeze(1)  # (P, 1)
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))  # (C/2,)
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
    return pe
