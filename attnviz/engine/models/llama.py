"""Llama, Qwen2 and Mistral weights -> a RopeModel (pre-norm decoder with RoPE, GQA, RMSNorm, SwiGLU).

The three share one architecture and differ in small switches, all read from config.json:
    Llama    attention_bias (q, k, v, o biases), mlp_bias (gate, up, down biases), head_dim
    Qwen2    q, k, v biases always (never o, never the MLP); a sliding window on some layers when use_sliding_window
    Mistral  no biases; sliding_window (keys per query) on every layer when set
Checkpoints name tensors `model.layers.{i}.self_attn.q_proj.weight` etc. ("model." is stripped on
reading) and `lm_head.weight`, absent when the head is tied to the token embeddings.
nn.Linear stores (out, in): each weight is transposed to (in, out).
"""

from __future__ import annotations

from pathlib import Path

import torch

from attnviz.engine.models.model import Embedder
from attnviz.engine.models.rope_model import RopeModel
from attnviz.engine.models.rope_stack import RopeConfig, RopeLayerWeights
from attnviz.engine.models.tokenizer import HFTokenizer
from attnviz.engine.rope_types import rope_inverse_frequencies, rope_parameters
from attnviz.errors import AttnvizError

ROPE_FAMILIES = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}
CHECKPOINT_PREFIXES = ("model.",)


def rope_config(config: dict, family: str) -> RopeConfig:
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
    if n_kv < 1 or n_heads % n_kv:
        raise AttnvizError(f"{n_heads} query heads cannot be shared evenly by {n_kv} key/value heads.")
    if config.get("hidden_act", "silu") != "silu":
        raise AttnvizError(f"The MLP activation '{config.get('hidden_act')}' is not SiLU, which attnviz's Llama stack uses.")
    params = rope_parameters(config)
    return RopeConfig(
        n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv, d_model=d_model, d_head=d_head, d_ff=d_ff,
        ln_eps=float(config.get("rms_norm_eps", 1e-6)), max_positions=int(config.get("max_position_embeddings", 2048)),
        inv_freq=rope_inverse_frequencies(params, d_head), rope_type=str(params["rope_type"]),
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


def _weight(w: dict, key: str) -> torch.Tensor:
    if key not in w:
        raise AttnvizError(f"The weights file lacks '{key}': it does not look like the architecture its config names.")
    return w[key]


def _linear_t(w: dict, name: str) -> torch.Tensor:
    return _weight(w, f"{name}.weight").t()  # (out, in) -> (in, out)


def _biases(w: dict, names: list[str], wanted: bool) -> torch.Tensor | None:
    return torch.cat([_weight(w, f"{n}.bias") for n in names]) if wanted else None


def layer_weights(w: dict, i: int, family: str, config: dict) -> RopeLayerWeights:
    p = f"layers.{i}."
    attn_bias = family == "qwen2" or (family == "llama" and bool(config.get("attention_bias")))
    o_bias = family == "llama" and bool(config.get("attention_bias"))
    mlp_bias = family == "llama" and bool(config.get("mlp_bias"))
    qkv = [p + f"self_attn.{n}_proj" for n in "qkv"]
    return RopeLayerWeights(
        w_qkv=torch.cat([_linear_t(w, n) for n in qkv], dim=1).contiguous(),  # (C, (nh + 2nkv)·hs)
        b_qkv=_biases(w, qkv, attn_bias),
        w_o=_linear_t(w, p + "self_attn.o_proj").contiguous(),  # (nh·hs, C)
        b_o=_biases(w, [p + "self_attn.o_proj"], o_bias),
        norm1=_weight(w, p + "input_layernorm.weight"), norm2=_weight(w, p + "post_attention_layernorm.weight"),
        w_gate=_linear_t(w, p + "mlp.gate_proj").contiguous(),  # (C, F)
        b_gate=_biases(w, [p + "mlp.gate_proj"], mlp_bias),
        w_up=_linear_t(w, p + "mlp.up_proj").contiguous(),  # (C, F)
        b_up=_biases(w, [p + "mlp.up_proj"], mlp_bias),
        w_down=_linear_t(w, p + "mlp.down_proj").contiguous(),  # (F, C)
        b_down=_biases(w, [p + "mlp.down_proj"], mlp_bias),
    )


def rope_decoder(folder: Path, config: dict, weights: dict, name: str, family: str, device: str = "cpu") -> RopeModel:
    """A Llama-family folder's config and (prefix-stripped) weights -> RopeModel with its tokenizer."""
    cfg = rope_config(config, family)
    embed = _weight(weights, "embed_tokens.weight")  # (V, C)
    if embed.shape[1] != cfg.d_model:
        raise AttnvizError(f"The token embeddings are {embed.shape[1]} wide but the config says {cfg.d_model}.")
    layers = [layer_weights(weights, i, family, config) for i in range(cfg.n_layers)]
    if config.get("tie_word_embeddings", False):
        lm_head = embed  # tied: logits = h · E_tokensᵀ, the same matrix read the other way
    else:  # None for a bare base model (AutoModel) saved without its head: it runs, but cannot generate
        lm_head = weights.get("lm_head.weight")  # (V, C)
    tokenizer = HFTokenizer.from_folder(folder, cfg.max_positions)
    return RopeModel(name, family, cfg, Embedder(word=embed, position=None), layers, tokenizer,
                     final_norm=_weight(weights, "norm.weight"), source=str(folder), device=device, lm_head=lm_head)
