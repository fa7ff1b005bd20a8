"""GPT-2 weights -> the from-scratch pre-LN stack with the causal mask built in.

GPT-2 stores its projections as Conv1D, already (in, out), and fuses Q, K, V into one c_attn
of shape (C, 3C) whose columns are [W_Q | W_K | W_V]: exactly our w_qkv, so no transpose.
"""

from __future__ import annotations

from attnviz.engine.models.model import Embedder
from attnviz.engine.models.stack import LayerWeights, StackConfig
from attnviz.errors import AttnvizError


def gpt2(config: dict, w: dict) -> tuple[StackConfig, Embedder, list[LayerWeights], tuple]:
    if "wte.weight" not in w:
        raise AttnvizError("The weights file lacks 'wte.weight': it does not look like a GPT-2 model.")
    if config.get("scale_attn_by_inverse_layer_idx") or config.get("reorder_and_upcast_attn"):
        raise AttnvizError("This GPT-2 variant rescales attention per layer, which attnviz does not model.")
    cfg = StackConfig(
        n_layers=config["n_layer"], n_heads=config["n_head"], d_model=config["n_embd"], pre_ln=True,
        activation=config.get("activation_function", "gelu_new"), ln_eps=config.get("layer_norm_epsilon", 1e-5),
        causal=True, max_positions=config["n_positions"],
    )
    emb = Embedder(word=w["wte.weight"], position=w["wpe.weight"])
    layers = []
    for i in range(cfg.n_layers):
        p = f"h.{i}."
        layers.append(LayerWeights(
            w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"],  # (C, 3C) = W_Q | W_K | W_V
            w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"],
            w[p + "ln_1.weight"], w[p + "ln_1.bias"], w[p + "ln_2.weight"], w[p + "ln_2.bias"],
            w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"], w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"],
        ))
    return cfg, emb, layers, (w["ln_f.weight"], w["ln_f.bias"])
