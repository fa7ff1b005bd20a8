"""GPT-2: config.json -> ModelConfig (pre-LN, learned positions, causal, a final ln_f), and its tensors' names.

GPT-2 stores its projections as Conv1D, already (in, out), and fuses Q, K, V into one c_attn
of shape (C, 3C) whose columns are [W_Q | W_K | W_V]: exactly our w_qkv, so no transpose.
"""

from __future__ import annotations

from pathlib import Path

from attnviz.engine.models.checkpoint import Checkpoint, LayerNames, read_layers
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder, Model
from attnviz.engine.models.tokenizer import HFTokenizer
from attnviz.errors import AttnvizError

GPT2_NAMES = LayerNames(prefix="h.{i}.", qkv=("attn.c_attn",), out="attn.c_proj", ln1="ln_1", ln2="ln_2",
                        ff1="mlp.c_fc", ff2="mlp.c_proj", stored_in_out=True)


def gpt2(folder: Path, config: dict, ckpt: Checkpoint, name: str, family: str = "gpt2", device: str = "cpu") -> Model:
    if "wte.weight" not in ckpt:
        raise AttnvizError("The weights file lacks 'wte.weight': it does not look like a GPT-2 model.")
    if config.get("scale_attn_by_inverse_layer_idx") or config.get("reorder_and_upcast_attn"):
        raise AttnvizError("This GPT-2 variant rescales attention per layer, which attnviz does not model.")
    cfg = ModelConfig(
        n_layers=config["n_layer"], n_heads=config["n_head"], d_model=config["n_embd"],
        d_ff=config.get("n_inner") or 4 * config["n_embd"], max_positions=config["n_positions"],
        activation=config.get("activation_function", "gelu_new"), ln_eps=config.get("layer_norm_epsilon", 1e-5),
        causal=True, pre_ln=True, final_norm=True,
    )
    emb = Embedder(word=ckpt.tensor("wte.weight"), position=ckpt.tensor("wpe.weight"))
    tokenizer = HFTokenizer.from_folder(folder, cfg.max_positions)
    return Model(name, family, cfg, emb, read_layers(ckpt, GPT2_NAMES, cfg), tokenizer,
                 final_ln=ckpt.norm("ln_f", cfg), source=str(folder), device=device,
                 lm_head=emb.word)  # GPT-2's head is tied to its token embeddings (wte)
