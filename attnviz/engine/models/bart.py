"""BART weights -> the from-scratch encoder–decoder (seq2seq.py).

BART (transformers' models/bart) in numbers:
    embeddings  x = LN_emb(E[ids] · s + P[2 + pos]),  s = sqrt(d_model) if scale_embedding else 1
                (learned positions whose table starts 2 rows in: BART's "offset 2")
    layers      post-LN, q/k/v/out_proj with biases, fc1 -> GELU -> fc2
    decoder     the same, plus `encoder_attn` (+ encoder_attn_layer_norm) between self-attention and FFN
The weights are read by checkpoint.py (nn.Linear's (out, in) transposed to (in, out)).
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from attnviz.engine.models.checkpoint import Checkpoint, LayerNames, read_layers
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder
from attnviz.engine.models.seq2seq import CrossWeights, EncoderDecoderModel
from attnviz.engine.models.stack import ACTIVATIONS
from attnviz.engine.models.tokenizer import HFTokenizer
from attnviz.errors import AttnvizError

POSITION_OFFSET = 2  # BART's learned position table reserves its first two rows
LN_EPS = 1e-5  # nn.LayerNorm's default, which BART uses everywhere
SELF_ATTENTION_NAMES = LayerNames(  # a layer's self-attention and FFN; the prefix is set per side
    prefix="", qkv=("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    out="self_attn.out_proj", ln1="self_attn_layer_norm", ln2="final_layer_norm", ff1="fc1", ff2="fc2",
)


def _check_variant(config: dict) -> None:
    """BART-shaped configs that compute something else (mBART's pre-LN, final norms) are refused, not guessed."""
    if config.get("normalize_before") or config.get("add_final_layer_norm"):
        raise AttnvizError("This BART variant normalises before each sublayer (pre-LN, as mBART does); attnviz runs "
                           "only BART's post-LN layers.")
    act = config.get("activation_function", "gelu")
    if act not in ACTIVATIONS:
        raise AttnvizError(f"BART with the '{act}' activation is not supported (known: {', '.join(ACTIVATIONS)}).")


def _stack_config(config: dict, side: str) -> ModelConfig:
    n_heads, d_model = config[f"{side}_attention_heads"], config["d_model"]
    if d_model % n_heads:
        raise AttnvizError(f"The config's d_model {d_model} is not divisible by its {n_heads} {side} heads.")
    return ModelConfig(
        n_layers=config[f"{side}_layers"], n_heads=n_heads, d_model=d_model,
        d_ff=config.get(f"{side}_ffn_dim", 4 * d_model), max_positions=config.get("max_position_embeddings", 1024),
        activation=config.get("activation_function", "gelu"), ln_eps=LN_EPS, causal=side == "decoder",
    )


def _embedder(config: dict, ckpt: Checkpoint, cfg: ModelConfig, side: str) -> Embedder:
    word = ckpt.optional(f"{side}.embed_tokens.weight")
    word = ckpt.optional("shared.weight") if word is None else word  # tied: only 'shared' may be saved
    if word is None:
        raise AttnvizError("The weights file has no token embeddings ('shared.weight'): it does not look like BART.")
    if config.get("scale_embedding"):
        word = word * math.sqrt(config["d_model"])  # E · sqrt(d_model), folded into the table once
    return Embedder(
        word=word, position=ckpt.tensor(f"{side}.embed_positions.weight"), position_offset=POSITION_OFFSET,
        ln=ckpt.norm(f"{side}.layernorm_embedding", cfg), ln_eps=LN_EPS,
    )


def _cross_attention_layer(ckpt: Checkpoint, cfg: ModelConfig, i: int) -> CrossWeights:
    p = f"decoder.layers.{i}.encoder_attn"
    (wq, bq), (wk, bk), (wv, bv) = (ckpt.linear(f"{p}.{n}_proj", bias=True) for n in "qkv")
    w_o, b_o = ckpt.linear(f"{p}.out_proj", bias=True)
    ln_w, ln_b = ckpt.norm(f"{p}_layer_norm", cfg)
    return CrossWeights(wq, bq, torch.cat([wk, wv], dim=1), torch.cat([bk, bv]), w_o, b_o, ln_w, ln_b)  # W_K | W_V (C, 2C)


def bart_model(folder, config: dict, ckpt: Checkpoint, name: str, family: str = "bart",
               device: str = "cpu") -> EncoderDecoderModel:
    """A BartModel / BartForConditionalGeneration folder (the 'model.' prefix already stripped from the checkpoint)."""
    _check_variant(config)
    enc_cfg, dec_cfg = _stack_config(config, "encoder"), _stack_config(config, "decoder")
    enc_layers = read_layers(ckpt, replace(SELF_ATTENTION_NAMES, prefix="encoder.layers.{i}."), enc_cfg)
    dec_layers = read_layers(ckpt, replace(SELF_ATTENTION_NAMES, prefix="decoder.layers.{i}."), dec_cfg)
    cross = [_cross_attention_layer(ckpt, dec_cfg, i) for i in range(dec_cfg.n_layers)]
    tokenizer = HFTokenizer.from_folder(folder, enc_cfg.max_positions)
    return EncoderDecoderModel(
        name, family, enc_cfg, _embedder(config, ckpt, enc_cfg, "encoder"), enc_layers, dec_cfg,
        _embedder(config, ckpt, dec_cfg, "decoder"),
        dec_layers, cross, tokenizer, decoder_start_id=int(config.get("decoder_start_token_id", 2)),
        source=str(folder), device=device,
    )
