"""BERT, RoBERTa and DistilBERT weights -> the from-scratch post-LN stack.

All three are encoders: x = LN(x + MHA(x)); x = LN(x + FFN(x)); they differ only in names
and embeddings. nn.Linear stores weights (out, in), so each is transposed to (in, out).
"""

from __future__ import annotations

import torch

from attnviz.engine.models.model import Embedder
from attnviz.engine.models.stack import LayerWeights, StackConfig
from attnviz.errors import AttnvizError


def _linear(w: dict, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    return w[f"{name}.weight"].t().contiguous(), w[f"{name}.bias"]  # (in, out), (out,)


def _fused_qkv(w: dict, q: str, k: str, v: str) -> tuple[torch.Tensor, torch.Tensor]:
    (wq, bq), (wk, bk), (wv, bv) = _linear(w, q), _linear(w, k), _linear(w, v)
    return torch.cat([wq, wk, wv], dim=1), torch.cat([bq, bk, bv])  # (C, 3C), (3C,)


def _require(w: dict, key: str) -> None:
    if key not in w:
        raise AttnvizError(f"The weights file lacks '{key}': it does not look like the architecture its config names.")


def bert_like(config: dict, w: dict, family: str) -> tuple[StackConfig, Embedder, list[LayerWeights]]:
    """BertModel / RobertaModel state dict (prefixes already stripped)."""
    _require(w, "embeddings.word_embeddings.weight")
    cfg = StackConfig(
        n_layers=config["num_hidden_layers"], n_heads=config["num_attention_heads"], d_model=config["hidden_size"],
        pre_ln=False, activation=config.get("hidden_act", "gelu"), ln_eps=config.get("layer_norm_eps", 1e-12),
        causal=False, max_positions=config["max_position_embeddings"],
    )
    offset = 0
    if family == "roberta":  # RoBERTa numbers real tokens from padding_idx + 1
        offset = config.get("pad_token_id", 1) + 1
    emb = Embedder(
        word=w["embeddings.word_embeddings.weight"], position=w["embeddings.position_embeddings.weight"],
        position_offset=offset, token_type=w["embeddings.token_type_embeddings.weight"][0],
        ln=(w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]), ln_eps=cfg.ln_eps,
    )
    layers = []
    for i in range(cfg.n_layers):
        p = f"encoder.layer.{i}."
        _require(w, p + "attention.self.query.weight")
        w_qkv, b_qkv = _fused_qkv(w, p + "attention.self.query", p + "attention.self.key", p + "attention.self.value")
        w_o, b_o = _linear(w, p + "attention.output.dense")
        w_ff1, b_ff1 = _linear(w, p + "intermediate.dense")
        w_ff2, b_ff2 = _linear(w, p + "output.dense")
        layers.append(LayerWeights(
            w_qkv, b_qkv, w_o, b_o,
            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"],
            w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
            w_ff1, b_ff1, w_ff2, b_ff2,
        ))
    return cfg, emb, layers


def distilbert(config: dict, w: dict) -> tuple[StackConfig, Embedder, list[LayerWeights]]:
    """DistilBertModel state dict: no token types; q_lin/k_lin/v_lin/out_lin names."""
    _require(w, "embeddings.word_embeddings.weight")
    cfg = StackConfig(
        n_layers=config["n_layers"], n_heads=config["n_heads"], d_model=config["dim"], pre_ln=False,
        activation=config.get("activation", "gelu"), ln_eps=1e-12, causal=False,
        max_positions=config["max_position_embeddings"],
    )
    emb = Embedder(
        word=w["embeddings.word_embeddings.weight"], position=w["embeddings.position_embeddings.weight"],
        ln=(w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]), ln_eps=cfg.ln_eps,
    )
    layers = []
    for i in range(cfg.n_layers):
        p = f"transformer.layer.{i}."
        _require(w, p + "attention.q_lin.weight")
        w_qkv, b_qkv = _fused_qkv(w, p + "attention.q_lin", p + "attention.k_lin", p + "attention.v_lin")
        w_o, b_o = _linear(w, p + "attention.out_lin")
        w_ff1, b_ff1 = _linear(w, p + "ffn.lin1")
        w_ff2, b_ff2 = _linear(w, p + "ffn.lin2")
        layers.append(LayerWeights(
            w_qkv, b_qkv, w_o, b_o, w[p + "sa_layer_norm.weight"], w[p + "sa_layer_norm.bias"],
            w[p + "output_layer_norm.weight"], w[p + "output_layer_norm.bias"], w_ff1, b_ff1, w_ff2, b_ff2,
        ))
    return cfg, emb, layers
