"""BART weights -> the from-scratch encoder–decoder (seq2seq.py).

BART (transformers' models/bart) in numbers:
    embeddings  x = LN_emb(E[ids] · s + P[2 + pos]),  s = sqrt(d_model) if scale_embedding else 1
                (learned positions whose table starts 2 rows in: BART's "offset 2")
    layers      post-LN, q/k/v/out_proj with biases, fc1 -> GELU -> fc2
    decoder     the same, plus `encoder_attn` (+ encoder_attn_layer_norm) between self-attention and FFN
nn.Linear stores weights (out, in): each is transposed to (in, out) so that y = x @ W + b.
"""

from __future__ import annotations

import math

import torch

from attnviz.engine.models.model import Embedder
from attnviz.engine.models.seq2seq import CrossWeights, EncoderDecoderModel
from attnviz.engine.models.stack import ACTIVATIONS, LayerWeights, StackConfig
from attnviz.engine.models.tokenizer import HFTokenizer
from attnviz.errors import AttnvizError

POSITION_OFFSET = 2  # BART's learned position table reserves its first two rows
LN_EPS = 1e-5  # nn.LayerNorm's default, which BART uses everywhere


def _linear(w: dict, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    _require(w, f"{name}.weight")
    return w[f"{name}.weight"].t().contiguous(), w[f"{name}.bias"]  # (in, out), (out,)


def _require(w: dict, key: str) -> None:
    if key not in w:
        raise AttnvizError(f"The weights file lacks '{key}': it does not look like a BART model.")


def _check_variant(config: dict) -> None:
    """BART-shaped configs that compute something else (mBART's pre-LN, final norms) are refused, not guessed."""
    if config.get("normalize_before") or config.get("add_final_layer_norm"):
        raise AttnvizError("This BART variant normalises before each sublayer (pre-LN, as mBART does); attnviz runs "
                           "only BART's post-LN layers.")
    act = config.get("activation_function", "gelu")
    if act not in ACTIVATIONS:
        raise AttnvizError(f"BART with the '{act}' activation is not supported (known: {', '.join(ACTIVATIONS)}).")


def _stack_config(config: dict, side: str) -> StackConfig:
    cfg = StackConfig(
        n_layers=config[f"{side}_layers"], n_heads=config[f"{side}_attention_heads"], d_model=config["d_model"],
        pre_ln=False, activation=config.get("activation_function", "gelu"), ln_eps=LN_EPS,
        causal=side == "decoder", max_positions=config.get("max_position_embeddings", 1024),
    )
    if cfg.d_model % cfg.n_heads:
        raise AttnvizError(f"The config's d_model {cfg.d_model} is not divisible by its {cfg.n_heads} {side} heads.")
    return cfg


def _embedder(config: dict, w: dict, side: str) -> Embedder:
    word = w.get(f"{side}.embed_tokens.weight", w.get("shared.weight"))  # tied: only 'shared' may be saved
    if word is None:
        raise AttnvizError("The weights file has no token embeddings ('shared.weight'): it does not look like BART.")
    if config.get("scale_embedding"):
        word = word * math.sqrt(config["d_model"])  # E · sqrt(d_model), folded into the table once
    _require(w, f"{side}.embed_positions.weight")
    return Embedder(
        word=word, position=w[f"{side}.embed_positions.weight"], position_offset=POSITION_OFFSET,
        ln=(w[f"{side}.layernorm_embedding.weight"], w[f"{side}.layernorm_embedding.bias"]), ln_eps=LN_EPS,
    )


def _self_attention_layer(w: dict, p: str) -> LayerWeights:
    """Self-attention + FFN of one layer, prefix p = 'encoder.layers.{i}.' or 'decoder.layers.{i}.'."""
    (wq, bq), (wk, bk), (wv, bv) = (_linear(w, p + f"self_attn.{n}_proj") for n in "qkv")
    w_o, b_o = _linear(w, p + "self_attn.out_proj")
    w_ff1, b_ff1 = _linear(w, p + "fc1")
    w_ff2, b_ff2 = _linear(w, p + "fc2")
    return LayerWeights(
        torch.cat([wq, wk, wv], dim=1), torch.cat([bq, bk, bv]), w_o, b_o,  # (C, 3C), (3C,)
        w[p + "self_attn_layer_norm.weight"], w[p + "self_attn_layer_norm.bias"],
        w[p + "final_layer_norm.weight"], w[p + "final_layer_norm.bias"], w_ff1, b_ff1, w_ff2, b_ff2,
    )


def _cross_attention_layer(w: dict, p: str) -> CrossWeights:
    (wq, bq), (wk, bk), (wv, bv) = (_linear(w, p + f"encoder_attn.{n}_proj") for n in "qkv")
    w_o, b_o = _linear(w, p + "encoder_attn.out_proj")
    return CrossWeights(wq, bq, torch.cat([wk, wv], dim=1), torch.cat([bk, bv]), w_o, b_o,  # W_K | W_V (C, 2C)
                        w[p + "encoder_attn_layer_norm.weight"], w[p + "encoder_attn_layer_norm.bias"])


def bart_model(config: dict, w: dict, folder, name: str, device: str = "cpu") -> EncoderDecoderModel:
    """A BartModel / BartForConditionalGeneration state dict (the 'model.' prefix already stripped)."""
    _check_variant(config)
    enc_cfg, dec_cfg = _stack_config(config, "encoder"), _stack_config(config, "decoder")
    enc_layers = [_self_attention_layer(w, f"encoder.layers.{i}.") for i in range(enc_cfg.n_layers)]
    dec_layers = [_self_attention_layer(w, f"decoder.layers.{i}.") for i in range(dec_cfg.n_layers)]
    cross = [_cross_attention_layer(w, f"decoder.layers.{i}.") for i in range(dec_cfg.n_layers)]
    tokenizer = HFTokenizer.from_folder(folder, enc_cfg.max_positions)
    return EncoderDecoderModel(
        name, "bart", enc_cfg, _embedder(config, w, "encoder"), enc_layers, dec_cfg, _embedder(config, w, "decoder"),
        dec_layers, cross, tokenizer, decoder_start_id=int(config.get("decoder_start_token_id", 2)),
        source=str(folder), device=device,
    )
