"""The Llama-family block (Llama, Qwen2, Mistral) recomputed from its weights, stage by stage, for one text.

A decoder block (causal: token i attends to tokens 0 .. i only), pre-norm with RMSNorm and a SwiGLU MLP:
    x_mid = x + Attn(RMSNorm₁(x))          RoPE rotates q and k inside Attn; K/V heads shared by groups (GQA)
    x_out = x_mid + W_down(silu(u W_gate) ⊙ u W_up),  u = RMSNorm₂(x_mid)
    RMSNorm(u)_i = u_i / √(mean_j u_ij² + ε) ⊙ g      (no centring, no bias: only a rescale)
Written out here from the layer's weights with the engine's small pieces (apply_rope, repeat_kv, the attention
trace), not by calling the stack's layer, so that the comparison with the model's kept trace means something.
Shapes: T tokens, C = d_model, F = MLP width, nh query heads, nkv K/V heads, hs = d_head (from the config).
"""

from __future__ import annotations

import torch

from attnviz.engine.attention import merge_heads, repeat_kv, scaled_dot_product_attention
from attnviz.engine.rope import apply_rope, rope_angles


def rms_norm_parts(u: torch.Tensor, g: torch.Tensor, eps: float):
    """-> (RMSNorm(u), rms): u / rms · g with rms = √(mean over features of u² + ε), per token (T,)."""
    rms = u.pow(2).mean(dim=-1, keepdim=True).add(eps).sqrt()  # (T, 1)
    return u / rms * g, rms[:, 0]


def _affine(u: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return u @ w if b is None else u @ w + b


def rope_block_attention(u: torch.Tensor, lw, cfg, inv_freq: torch.Tensor, mask, scale: float) -> torch.Tensor:
    """Concat(head_0 .. head_nh−1) W_O with head_h = softmax(RoPE(Q_h) RoPE(K_{h // g})ᵀ · s + M) V_{h // g}: (T, C) -> (T, C)."""
    T = u.shape[0]
    nh, nkv, hs = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    q, k, v = _affine(u, lw.w_qkv, lw.b_qkv).split([nh * hs, nkv * hs, nkv * hs], dim=1)  # (T, nh·hs), (T, nkv·hs) ×2
    q = q.view(1, T, nh, hs).transpose(1, 2)  # (1, nh, T, hs)
    k = k.view(1, T, nkv, hs).transpose(1, 2)  # (1, nkv, T, hs)
    v = v.view(1, T, nkv, hs).transpose(1, 2)  # (1, nkv, T, hs)
    cos, sin = rope_angles(torch.arange(T), inv_freq)  # (T, hs): position t turns pair i by t·θ_i
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    g = cfg.n_heads // cfg.n_kv_heads  # query heads per K/V head
    heads, _ = scaled_dot_product_attention(q, repeat_kv(k, g), repeat_kv(v, g), mask=mask, scale=scale)  # (1, nh, T, hs)
    return _affine(merge_heads(heads), lw.w_o, lw.b_o)[0]  # (1, T, nh·hs) · (nh·hs, C) -> (T, C)


def rms_tex(k: int, u: str) -> str:
    """RMSNorm_k(u)_i = u_i / √(mean_j u_ij² + ε) ⊙ g_k."""
    return (rf"\mathrm{{RMSNorm}}_{k}({u})_i \\ &= \frac{{{u}_i}}{{\sqrt{{\tfrac{{1}}{{C}}\sum_j {u}_{{ij}}^2 + \varepsilon}}}}"
            rf" \odot g_{k}")


def llama_block_stages(x: torch.Tensor, lw, cfg, inv_freq: torch.Tensor, mask, scale: float, stage_cls):
    """-> (stages, norms {key: (None, rms)}, attn, mlp, x_mid, x_out) for the block's input x (T, C)."""
    eps, F = cfg.ln_eps, cfg.d_ff
    u1, rms1 = rms_norm_parts(x, lw.ln1_w, eps)
    attn = rope_block_attention(u1, lw, cfg, inv_freq, mask, scale)
    x_mid = x + attn
    u2, rms2 = rms_norm_parts(x_mid, lw.ln2_w, eps)
    gate, up = _affine(u2, lw.w_gate, lw.b_gate), _affine(u2, lw.w_ff1, lw.b_ff1)  # each (T, F)
    gated = torch.nn.functional.silu(gate) * up  # (T, F): silu(z) = z·σ(z) decides how much of each up feature passes
    mlp = _affine(gated, lw.w_ff2, lw.b_ff2)  # (T, C)
    x_out = x_mid + mlp
    xm = r"x^{\text{mid}}"
    group = cfg.n_heads // cfg.n_kv_heads
    S = stage_cls
    stages = [
        S("x", "input x", r"x_i", x, "The residual stream entering the block."),
        S("ln1", "RMSNorm first", rms_tex(1, "x"), u1,
          "Pre-norm with RMSNorm: each token's vector is divided by its root mean square (no centring, no bias) and "
          "scaled by g₁; the residual stream itself is left as it is."),
        S("attn", "causal attention with RoPE", r"\mathrm{Attn}(\mathrm{RMSNorm}_1(x))_i", attn,
          f"Queries and keys are rotated by RoPE (position enters here, nowhere else); {cfg.n_heads} query heads share "
          f"{cfg.n_kv_heads} K/V head{'s' if cfg.n_kv_heads > 1 else ''} (query head h reads K/V head h // {group}); "
          f"token i sees tokens 0 .. i only; Concat(heads) · W_O maps {cfg.n_heads}·{cfg.d_head} → {cfg.d_model}."),
        S("r1", "+ residual", rf"{xm}_i = x_i + \mathrm{{Attn}}(\mathrm{{RMSNorm}}_1(x))_i", x_mid,
          "Added to the stream, with no norm after it."),
        S("ln2", "RMSNorm before the MLP", rms_tex(2, xm), u2, "The MLP, too, reads a normalised copy."),
        S("gate", f"SwiGLU: gate = · W_gate ({F} wide)", rf"a_i = \mathrm{{RMSNorm}}_2({xm})_i W_{{\text{{gate}}}}", gate,
          f"Every token on its own is lifted to the MLP's {F} features, twice: once for the gate ..."),
        S("up", f"SwiGLU: up = · W_up ({F} wide)", rf"b_i = \mathrm{{RMSNorm}}_2({xm})_i W_{{\text{{up}}}}", up,
          "... and once for the values that the gate lets through."),
        S("act", "SwiGLU: silu(gate) ⊙ up", r"h_i = \mathrm{silu}(a_i) \odot b_i,\quad \mathrm{silu}(z) = z\,\sigma(z)",
          gated, "The gate, through SiLU, scales each up feature: a non-linearity made of a product."),
        S("ff2", "SwiGLU: · W_down", r"\mathrm{MLP}_i = h_i W_{\text{down}}", mlp, "Back down to d_model."),
        S("r2", "+ residual → block output", rf"x^{{\text{{out}}}}_i = {xm}_i + \mathrm{{MLP}}_i", x_out,
          "Added to the stream: this is what the next block reads."),
    ]
    return stages, {"ln1": (None, rms1), "ln2": (None, rms2)}, attn, mlp, x_mid, x_out
