"""Layer L's projections applied across two sentences: a demonstration on a model without a decoder.

An encoder-only (or decoder-only) model never computes cross-attention. What we *can* do with its real
weights is what cross-attention does: take queries from one sequence and keys and values from another.
    Q = X_target W_Q + b_Q    (n_target × d_head per head), X_target = the target's own layer-L input
    K = X_source W_K + b_K    (n_source × d_head),           X_source = the source's own layer-L input
    V = X_source W_V + b_V
    weights = softmax(Q Kᵀ · s)   (n_target × n_source), no mask: every query may read every source token
Each sentence is first run on its own through layers 0..L-1 (at the trained settings) to get its layer-L
input. With source = target this is exactly the model's own (unmasked) layer-L self-attention.
Shapes: nh heads, T target tokens, S source tokens, C = d_model, hs = d_head.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import scaled_dot_product_attention_trace, split_heads
from attnviz.engine.models.stack import layer_norm
from attnviz.errors import AttnvizError

# Families whose attention input is the layer's (normed) residual stream and nothing else: no rotary positions
# inside attention, so the layer-L projections of two separately run sentences can meet directly.
DEMO_FAMILIES = {"bert", "roberta", "distilbert", "gpt2", "toy"}


@dataclass
class AcrossSentences:
    """What layer `layer`'s projections compute across a target and a source sentence."""

    layer: int
    q: torch.Tensor  # (nh, T, hs) from the target
    k: torch.Tensor  # (nh, S, hs) from the source
    v: torch.Tensor  # (nh, S, hs) from the source
    scale: float
    weights: torch.Tensor  # softmax(Q Kᵀ · s) (nh, T, S), rows sum to 1
    output: torch.Tensor  # weights @ V (nh, T, hs)
    target_tokens: list[str]
    target_labels: list[str]
    source_tokens: list[str]
    source_labels: list[str]
    notes: list[str]


def attention_input(model, text: str, layer: int, which: str):
    """(layer-`layer` attention input of `text` run alone (T, C), its RunResult): post-LN feeds the residual
    stream itself; pre-LN (GPT-2) feeds LN₁ of it."""
    if which == "target" and model.encode(text).truncated:  # checked before the (costlier) run
        raise AttnvizError(f"The target is longer than {model.name} can take ({model.max_tokens} tokens): shorten it.")
    res = model.run(text, keep=True)
    x = res.traces[layer].x_in[0]  # (T, C)
    lw = model.layers[layer]
    if model.cfg.pre_ln:
        x = layer_norm(x, lw.ln1_w.cpu(), lw.ln1_b.cpu(), model.cfg.ln_eps)
    return x, res


def projections_across_sentences(model, source: str, target: str, layer: int, scale=True) -> AcrossSentences:
    """Layer `layer`'s W_Q on the target, W_K and W_V on the source, per head (see the module docstring)."""
    if model.is_encoder_decoder:
        raise AttnvizError(f"{model.name} has a real cross-attention: use model.run(source, target=...).")
    if model.family not in DEMO_FAMILIES:
        raise AttnvizError(f"The two-sentence demonstration runs on {', '.join(sorted(DEMO_FAMILIES))} models, "
                           f"not {model.family}.")
    if not 0 <= layer < model.n_layers:
        raise AttnvizError(f"{model.name} has layers 0..{model.n_layers - 1}, not {layer}.")
    x_s, res_s = _which("source", attention_input, model, source, layer)
    x_t, res_t = _which("target", attention_input, model, target, layer)
    lw = model.layers[layer]
    C, nh = model.d_model, model.n_heads
    w_q, w_k, w_v = lw.w_qkv.cpu().split(C, dim=1)  # each (C, C)
    b_q, b_k, b_v = lw.b_qkv.cpu().split(C)  # each (C,)
    q = split_heads((x_t @ w_q + b_q)[None], nh)[0]  # Q from the target   (nh, T, hs)
    k = split_heads((x_s @ w_k + b_k)[None], nh)[0]  # K from the source   (nh, S, hs)
    v = split_heads((x_s @ w_v + b_v)[None], nh)[0]  # V from the source   (nh, S, hs)
    att = scaled_dot_product_attention_trace(q, k, v, mask=None, scale=scale)  # weights (nh, T, S)
    notes = [f"Source: {n}" for n in res_s.notes]
    return AcrossSentences(layer, q, k, v, att.scale, att.weights, att.output, res_t.tokens, res_t.labels,
                           res_s.tokens, res_s.labels, notes)


def _which(which: str, fn, *args):
    try:
        return fn(*args, which)
    except AttnvizError as err:
        message = str(err)
        raise AttnvizError(message if message.startswith("The target") else f"{which.capitalize()}: {message}") from None
