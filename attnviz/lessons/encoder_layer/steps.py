"""One whole transformer layer recomputed from scratch from its weights, stage by stage, for one text.

    post-LN (BERT, RoBERTa, DistilBERT, MiniLM, toy, BART's encoder):  x_mid = LN(x + MHA(x));      x_out = LN(x_mid + FFN(x_mid))
    pre-LN  (GPT-2):                                  x_mid = x + MHA(LN(x));      x_out = x_mid + FFN(LN(x_mid))
    pre-RMSNorm decoder block (Llama, Qwen2, Mistral): x_mid = x + Attn(RMSNorm(x)); x_out = x_mid + SwiGLU(RMSNorm(x_mid))
        with RoPE inside the attention (see llama_block.py)
    FFN(u) = act(u W_1 + b_1) W_2 + b_2,  LN(u) = (u − μ) / √(σ² + ε) · γ + β  over the features of each token.

The order is read from the model's config (ModelConfig's norm, pre_ln, mlp, positions, K/V heads and biases, never
its family's name); for a layer these recomputations do not cover we say so rather than guess. Every stage is
checked against the stack's own kept trace.
Shapes: T tokens, C = d_model, F = FFN width, nh heads, hs = d_head.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import merge_heads, scaled_dot_product_attention, split_heads
from attnviz.engine.models.stack import ACTIVATIONS
from attnviz.errors import AttnvizError
from attnviz.lessons.encoder_layer.llama_block import llama_block_stages


def ln_tex(k: int, u: str) -> str:
    """LN_k(u)_i = (u_i − μ_i) / √(σ_i² + ε) ⊙ γ_k + β_k, for the vector named u."""
    part = f"({u})_i" if "+" in u else f"{u}_i"  # (x + MHA(x))_i, but x_i
    return (rf"\mathrm{{LN}}_{k}({u})_i \\ &= \frac{{{part} - \mu_i}}{{\sqrt{{\sigma_i^2 + \varepsilon}}}}"
            rf" \odot \gamma_{k} + \beta_{k}")


@dataclass(frozen=True)
class Stage:
    key: str
    title: str
    equation: str  # LaTeX of this stage for token i (lines of an aligned block: "\\ &" between them)
    value: torch.Tensor  # (T, C) or (T, F)
    note: str = ""  # one plain sentence


@dataclass
class LayerSteps:
    layer: int
    order: str  # "post-LN", "pre-LN" or "pre-RMSNorm" (the Llama-family decoder block)
    labels: list[str]
    stages: list[Stage]
    ln: dict[str, tuple[torch.Tensor | None, torch.Tensor]]  # norm key -> (μ (T,), σ = √(var + ε) (T,)) of its input;
    # for RMSNorm (None, rms = √(mean u² + ε) (T,)): nothing is subtracted
    x_in: torch.Tensor  # (T, C)
    attn: torch.Tensor  # MHA(·), what attention adds to the residual stream (T, C)
    ffn: torch.Tensor  # FFN(·), what the FFN adds (T, C)
    x_mid: torch.Tensor  # recomputed residual stream after the attention sub-layer (T, C)
    x_out: torch.Tensor  # recomputed layer output (T, C)
    trace_gaps: dict[str, float]  # max |recomputed − the stack's trace| for attn_out, x_mid, x_out

    def stage(self, key: str) -> Stage:
        return next(s for s in self.stages if s.key == key)


def layer_title(cfg) -> str:
    """The page's title for a model's layer, naming the norm and feed-forward its config has (a ModelConfig)."""
    norm = "RMSNorm" if cfg.norm == "rms" else "LayerNorm"
    ffn = "SwiGLU feed-forward" if cfg.mlp == "swiglu" else "feed-forward"
    return f"The whole layer: residual, {norm}, {ffn}"


def layer_order(model) -> str:
    """"post-LN", "pre-LN" or "pre-RMSNorm", read from the model's ModelConfig; a layer that neither recomputation
    covers is a clear error, never a guess."""
    cfg = model.cfg
    if cfg.norm == "rms" and cfg.pre_ln and cfg.mlp == "swiglu" and cfg.positions == "rope":
        return "pre-RMSNorm"  # the Llama-family block: llama_block.py
    if (cfg.norm == "layer" and cfg.mlp == "ffn" and cfg.positions != "rope" and cfg.n_kv_heads == cfg.n_heads
            and cfg.qkv_bias and cfg.out_bias and cfg.mlp_bias):
        return "pre-LN" if cfg.pre_ln else "post-LN"
    raise AttnvizError(f"{model.name}'s layer (norm {cfg.norm!r}, pre_ln = {cfg.pre_ln}, mlp {cfg.mlp!r}, positions "
                       f"{cfg.positions!r}, {cfg.n_kv_heads} K/V heads for {cfg.n_heads}) is not one this page "
                       "recomputes, so it does not guess its order: it walks through a LayerNorm layer (post-LN or "
                       "pre-LN, an FFN, every bias, a K/V head per head) and the pre-RMSNorm Llama block "
                       "(SwiGLU, RoPE).")


def layer_norm_parts(u: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float):
    """-> (LN(u), μ, σ): (u − μ) / σ · γ + β with μ, σ² the mean and (biased) variance over features, σ = √(σ² + ε)."""
    mu = u.mean(dim=-1, keepdim=True)  # (T, 1)
    sigma = ((u - mu) ** 2).mean(dim=-1, keepdim=True).add(eps).sqrt()  # (T, 1)
    return (u - mu) / sigma * gamma + beta, mu[:, 0], sigma[:, 0]


def multi_head_attention(u: torch.Tensor, lw, n_heads: int, mask, scale: float) -> torch.Tensor:
    """Concat(head_0 .. head_nh−1) W_O + b_O with head_h = softmax(Q_h K_hᵀ · s + M) V_h: (T, C) -> (T, C)."""
    C = u.shape[-1]
    qkv = u[None] @ lw.w_qkv + lw.b_qkv  # (1, T, 3C)
    q, k, v = (split_heads(t, n_heads) for t in qkv.split(C, dim=2))  # each (1, nh, T, hs)
    heads, _ = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)  # (1, nh, T, hs)
    return (merge_heads(heads) @ lw.w_o + lw.b_o)[0]  # (1, T, C) -> (T, C)


def layer_steps(model, res, layer: int) -> LayerSteps:
    """`layer` recomputed from its weights for the run `res` (made with keep=True), every stage kept."""
    order = layer_order(model)
    if res.traces is None:
        raise AttnvizError("This run kept no intermediates: run the model with keep=True.")
    if not 0 <= layer < len(res.traces):
        raise AttnvizError(f"Layer {layer} does not exist: the model has layers 0 to {len(res.traces) - 1}.")
    trace = res.traces[layer]
    lw = model.layers[layer].to(torch.device("cpu"))
    mask = None if trace.mask is None else trace.mask.cpu()
    x = trace.x_in[0].float()  # (T, C): the residual stream entering the layer, as the stack had it
    if order == "pre-RMSNorm":
        stages, norms, attn, f, x_mid, x_out = llama_block_stages(x, lw, model.cfg, model.inv_freq.cpu(), mask,
                                                                  trace.scale, Stage)
        return _finish(layer, order, res, stages, norms, x, attn, f, x_mid, x_out, trace)
    eps, act = model.cfg.ln_eps, ACTIVATIONS[model.cfg.activation]
    mha = lambda u: multi_head_attention(u, lw, model.n_heads, mask, trace.scale)

    def ffn(u):
        hidden = u @ lw.w_ff1 + lw.b_ff1  # (T, F)
        activated = act(hidden)  # (T, F)
        return hidden, activated, activated @ lw.w_ff2 + lw.b_ff2  # (T, C)

    a, F = model.cfg.activation, lw.w_ff1.shape[1]
    act_tex = r"\mathrm{" + a.replace("_", r"\_") + "}(h_i)"
    if order == "post-LN":
        attn = mha(x)
        r1 = x + attn
        x_mid, mu1, s1 = layer_norm_parts(r1, lw.ln1_w, lw.ln1_b, eps)
        hidden, activated, f = ffn(x_mid)
        r2 = x_mid + f
        x_out, mu2, s2 = layer_norm_parts(r2, lw.ln2_w, lw.ln2_b, eps)
        stages = [
            Stage("x", "input x", r"x_i", x, "The residual stream entering the layer."),
            Stage("attn", "multi-head attention", r"\mathrm{MHA}(x)_i = \mathrm{Concat}(\mathrm{head}_0, \dots)_i W_O + b_O",
                  attn, "What attention writes: the heads' outputs mixed by W_O (where Step by step stops)."),
            Stage("r1", "+ residual", r"x_i + \mathrm{MHA}(x)_i", r1, "The input is added back: the residual connection."),
            Stage("ln1", "LayerNorm", r"x^{\text{mid}}_i = " + ln_tex(1, r"x + \mathrm{MHA}(x)"), x_mid,
                  "Each token's vector is centred and scaled to unit variance, then scaled and shifted by γ₁, β₁."),
            Stage("ff1", f"FFN: · W₁ + b₁ ({F} wide)", r"h_i = x^{\text{mid}}_i W_1 + b_1", hidden,
                  f"Every token on its own is lifted to the FFN's {F} features."),
            Stage("act", f"FFN: {a}", act_tex, activated,
                  "A non-linearity, feature by feature."),
            Stage("ff2", "FFN: · W₂ + b₂", r"\mathrm{FFN}(x^{\text{mid}})_i = \mathrm{act}(h_i) W_2 + b_2", f,
                  "Back down to d_model."),
            Stage("r2", "+ residual", r"x^{\text{mid}}_i + \mathrm{FFN}(x^{\text{mid}})_i", r2, "The residual connection again."),
            Stage("ln2", "LayerNorm → layer output",
                  r"x^{\text{out}}_i = " + ln_tex(2, r"x^{\text{mid}} + \mathrm{FFN}(x^{\text{mid}})"),
                  x_out, "Normalised once more: this is what the next layer reads."),
        ]
    else:
        u1, mu1, s1 = layer_norm_parts(x, lw.ln1_w, lw.ln1_b, eps)
        attn = mha(u1)
        x_mid = x + attn
        u2, mu2, s2 = layer_norm_parts(x_mid, lw.ln2_w, lw.ln2_b, eps)
        hidden, activated, f = ffn(u2)
        x_out = x_mid + f
        stages = [
            Stage("x", "input x", r"x_i", x, "The residual stream entering the layer."),
            Stage("ln1", "LayerNorm first", ln_tex(1, "x"), u1,
                  "Pre-LN: attention reads a normalised copy; the residual stream itself is left as it is."),
            Stage("attn", "multi-head attention", r"\mathrm{MHA}(\mathrm{LN}_1(x))_i", attn,
                  "What attention writes: the heads' outputs mixed by W_O (where Step by step stops)."),
            Stage("r1", "+ residual", r"x^{\text{mid}}_i = x_i + \mathrm{MHA}(\mathrm{LN}_1(x))_i", x_mid,
                  "Added to the stream, with no LayerNorm after it."),
            Stage("ln2", "LayerNorm before the FFN",
                  ln_tex(2, r"x^{\text{mid}}"),
                  u2, "The FFN, too, reads a normalised copy."),
            Stage("ff1", f"FFN: · W₁ + b₁ ({F} wide)", r"h_i = \mathrm{LN}_2(x^{\text{mid}})_i W_1 + b_1", hidden,
                  f"Every token on its own is lifted to the FFN's {F} features."),
            Stage("act", f"FFN: {a}", act_tex, activated,
                  "A non-linearity, feature by feature."),
            Stage("ff2", "FFN: · W₂ + b₂", r"\mathrm{FFN}_i = \mathrm{act}(h_i) W_2 + b_2", f, "Back down to d_model."),
            Stage("r2", "+ residual → layer output", r"x^{\text{out}}_i = x^{\text{mid}}_i + \mathrm{FFN}_i", x_out,
                  "Added to the stream: this is what the next layer reads."),
        ]
    return _finish(layer, order, res, stages, {"ln1": (mu1, s1), "ln2": (mu2, s2)}, x, attn, f, x_mid, x_out, trace)


def _finish(layer, order, res, stages, norms, x, attn, f, x_mid, x_out, trace) -> LayerSteps:
    """LayerSteps with the max gaps between the recomputation and the stack's kept trace."""
    gaps = {name: float((mine - theirs[0].cpu()).abs().max()) for name, mine, theirs in
            (("attn_out", attn, trace.attn_out), ("x_mid", x_mid, trace.x_mid), ("x_out", x_out, trace.x_out))}
    return LayerSteps(layer=layer, order=order, labels=list(res.labels), stages=stages, ln=norms, x_in=x, attn=attn,
                      ffn=f, x_mid=x_mid, x_out=x_out, trace_gaps=gaps)


@dataclass(frozen=True)
class Sizes:
    d_model: int
    d_ff: int
    n_layers: int
    n_heads: int
    d_head: int


PAPER_SIZES = Sizes(d_model=512, d_ff=2048, n_layers=6, n_heads=8, d_head=64)  # Vaswani et al. 2017, base


def model_sizes(model) -> Sizes:
    return Sizes(model.d_model, model.cfg.d_ff, model.n_layers, model.n_heads, model.d_head)
