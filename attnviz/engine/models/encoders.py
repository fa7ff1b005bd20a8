"""BERT, RoBERTa and DistilBERT: config.json -> ModelConfig, and where their tensors sit.

All three are post-LN encoders, x = LN(x + MHA(x)); x = LN(x + FFN(x)), with learned positions; they
differ only in names and embeddings (RoBERTa numbers positions from padding_idx + 1; DistilBERT has no
token types). The weights are read by checkpoint.py.
"""

from __future__ import annotations

from pathlib import Path

from attnviz.engine.models.checkpoint import Checkpoint, LayerNames, read_layers
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder, Model
from attnviz.engine.models.tokenizer import HFTokenizer

BERT_NAMES = LayerNames(
    prefix="encoder.layer.{i}.", qkv=("attention.self.query", "attention.self.key", "attention.self.value"),
    out="attention.output.dense", ln1="attention.output.LayerNorm", ln2="output.LayerNorm",
    ff1="intermediate.dense", ff2="output.dense",
)
DISTILBERT_NAMES = LayerNames(
    prefix="transformer.layer.{i}.", qkv=("attention.q_lin", "attention.k_lin", "attention.v_lin"),
    out="attention.out_lin", ln1="sa_layer_norm", ln2="output_layer_norm", ff1="ffn.lin1", ff2="ffn.lin2",
)


def bert_like(folder: Path, config: dict, ckpt: Checkpoint, name: str, family: str, device: str = "cpu") -> Model:
    """A BertModel / RobertaModel folder (prefixes already stripped from the checkpoint) -> Model."""
    word = ckpt.tensor("embeddings.word_embeddings.weight")  # (V, C)
    cfg = ModelConfig(
        n_layers=config["num_hidden_layers"], n_heads=config["num_attention_heads"], d_model=config["hidden_size"],
        d_ff=config.get("intermediate_size", 4 * config["hidden_size"]), max_positions=config["max_position_embeddings"],
        activation=config.get("hidden_act", "gelu"), ln_eps=config.get("layer_norm_eps", 1e-12),
    )
    offset = 0
    if family == "roberta":  # RoBERTa numbers real tokens from padding_idx + 1
        offset = config.get("pad_token_id", 1) + 1
    emb = Embedder(
        word=word, position=ckpt.tensor("embeddings.position_embeddings.weight"), position_offset=offset,
        token_type=ckpt.tensor("embeddings.token_type_embeddings.weight")[0],
        ln=ckpt.norm("embeddings.LayerNorm", cfg), ln_eps=cfg.ln_eps,
    )
    tokenizer = HFTokenizer.from_folder(folder, cfg.max_positions - offset)
    return Model(name, family, cfg, emb, read_layers(ckpt, BERT_NAMES, cfg), tokenizer, source=str(folder), device=device)


def distilbert(folder: Path, config: dict, ckpt: Checkpoint, name: str, family: str, device: str = "cpu") -> Model:
    """A DistilBertModel folder: no token types; q_lin/k_lin/v_lin/out_lin names."""
    word = ckpt.tensor("embeddings.word_embeddings.weight")  # (V, C)
    cfg = ModelConfig(
        n_layers=config["n_layers"], n_heads=config["n_heads"], d_model=config["dim"],
        d_ff=config.get("hidden_dim", 4 * config["dim"]), max_positions=config["max_position_embeddings"],
        activation=config.get("activation", "gelu"), ln_eps=1e-12,
    )
    emb = Embedder(word=word, position=ckpt.tensor("embeddings.position_embeddings.weight"),
                   ln=ckpt.norm("embeddings.LayerNorm", cfg), ln_eps=cfg.ln_eps)
    tokenizer = HFTokenizer.from_folder(folder, cfg.max_positions)
    return Model(name, family, cfg, emb, read_layers(ckpt, DISTILBERT_NAMES, cfg), tokenizer, source=str(folder),
                 device=device)
