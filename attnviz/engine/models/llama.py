"""Llama, Qwen2 and Mistral: config.json -> ModelConfig (pre-RMSNorm decoder with RoPE, GQA, SwiGLU), and their names.

The three share one architecture and differ in small switches, all read from config.json:
    Llama    attention_bias (q, k, v, o biases), mlp_bias (gate, up, down biases), head_dim
    Qwen2    q, k, v biases always (never o, never the MLP); a sliding window on some layers when use_sliding_window
    Mistral  no biases; sliding_window (keys per query) on every layer when set
Checkpoints name tensors `model.layers.{i}.self_attn.q_proj.weight` etc. ("model." is stripped on
reading) and `lm_head.weight`, absent when the head is tied to the token embeddings.
The weights are read by checkpoint.py.
"""

from __future__ import annotations

from pathlib import Path

from attnviz.engine.models.checkpoint import Checkpoint, LayerNames, read_layers
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder, Model
from attnviz.engine.models.tokenizer import HFTokenizer
from attnviz.engine.rope_types import rope_inverse_frequencies, rope_parameters
from attnviz.errors import AttnvizError

ROPE_FAMILIES = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}
CHECKPOINT_PREFIXES = ("model.",)
LLAMA_NAMES = LayerNames(
    prefix="layers.{i}.", qkv=("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"), out="self_attn.o_proj",
    ln1="input_layernorm", ln2="post_attention_layernorm", ff1="mlp.up_proj", ff2="mlp.down_proj", gate="mlp.gate_proj",
)


def rope_config(config: dict, family: str) -> ModelConfig:
    """The stack's facts from a Llama / Qwen2 / Mistral config.json."""
    try:
        n_heads = int(config["num_attention_heads"])
        d_model = int(config["hidden_size"])
        n_kv = int(config.get("num_key_value_heads") or n_heads)
        d_head = int(config.get("head_dim") or d_model // n_heads)
        n_layers = int(config["num_hidden_layers"])
        d_ff = int(config["intermediate_size"])
    except (KeyError, TypeError, ValueError) as err:
        raise AttnvizError(f"The {ROPE_FAMILIES[family]} config lacks a usable {err}.") from None
    if config.get("hidden_act", "silu") != "silu":
        raise AttnvizError(f"The MLP activation '{config.get('hidden_act')}' is not SiLU, which attnviz's Llama stack uses.")
    params = rope_parameters(config)
    attention_bias = family == "llama" and bool(config.get("attention_bias"))
    return ModelConfig(
        n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv, d_model=d_model, d_head=d_head, d_ff=d_ff,
        max_positions=int(config.get("max_position_embeddings", 2048)), activation="silu",
        ln_eps=float(config.get("rms_norm_eps", 1e-6)), causal=True, norm="rms", pre_ln=True, final_norm=True,
        positions="rope", mlp="swiglu", qkv_bias=family == "qwen2" or attention_bias, out_bias=attention_bias,
        mlp_bias=family == "llama" and bool(config.get("mlp_bias")),
        rope_type=str(params["rope_type"]), inv_freq=rope_inverse_frequencies(params, d_head),
        windows=sliding_windows(config, family, n_layers),
    )


def sliding_windows(config: dict, family: str, n_layers: int) -> tuple[int | None, ...]:
    """Per layer, the sliding window (keys a query may see, itself included) or None for full causal attention."""
    window = config.get("sliding_window")
    if family == "mistral":
        return (int(window),) * n_layers if window else (None,) * n_layers
    if family == "qwen2":
        if not config.get("use_sliding_window") or not window:
            return (None,) * n_layers
        types = config.get("layer_types") or [
            "sliding_attention" if i >= config.get("max_window_layers", 28) else "full_attention" for i in range(n_layers)
        ]
        return tuple(int(window) if t == "sliding_attention" else None for t in types)
    return (None,) * n_layers


def rope_decoder(folder: Path, config: dict, ckpt: Checkpoint, name: str, family: str, device: str = "cpu") -> Model:
    """A Llama-family folder's config and (prefix-stripped) weights -> Model with its tokenizer."""
    cfg = rope_config(config, family)
    embed = ckpt.tensor("embed_tokens.weight")  # (V, C)
    if embed.shape[1] != cfg.d_model:
        raise AttnvizError(f"The token embeddings are {embed.shape[1]} wide but the config says {cfg.d_model}.")
    layers = read_layers(ckpt, LLAMA_NAMES, cfg)
    if config.get("tie_word_embeddings", False):
        lm_head = embed  # tied: logits = h · E_tokensᵀ, the same matrix read the other way
    else:  # None for a bare base model (AutoModel) saved without its head: it runs, but cannot generate
        lm_head = ckpt.optional("lm_head.weight")  # (V, C)
    tokenizer = HFTokenizer.from_folder(folder, cfg.max_positions)
    return Model(name, family, cfg, Embedder(word=embed, position=None), layers, tokenizer,
                 final_ln=ckpt.norm("norm", cfg), source=str(folder), device=device, lm_head=lm_head)
