"""The one place that reads checkpoint weights: a model folder's safetensors, by name, into LayerWeights.

Only safetensors are read (never pickle), and never with trust_remote_code: the architecture is ours
(ModelConfig + stack.py), the folder only supplies numbers. Each family says where its tensors sit
(LayerNames); `read_layer` reads any family's layer from those names and the config's bias switches.
nn.Linear stores weights (out, in): each is transposed to (in, out) so that y = x @ W + b. GPT-2's Conv1D
stores (in, out) already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file

from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.stack import LayerWeights
from attnviz.errors import AttnvizError


class Checkpoint:
    """A model's tensors by name, checkpoint prefixes stripped, old names normalised, as float32."""

    def __init__(self, tensors: dict[str, torch.Tensor]):
        self.tensors = tensors

    @classmethod
    def from_folder(cls, folder: Path, prefixes: tuple[str, ...] = ()) -> Checkpoint:
        """Every tensor of the folder's safetensors file(s); `prefixes` ('bert.', 'model.', ...) are taken off names."""
        files = sorted(Path(folder).glob("*.safetensors"))
        if not files:
            found = ", ".join(p.name for p in Path(folder).glob("*.bin")) or "none"
            raise AttnvizError(f"'{folder}' has no .safetensors weights (found: {found}). attnviz only reads safetensors.")
        tensors = {}
        for f in files:
            for key, tensor in load_file(str(f)).items():
                for prefix in prefixes:
                    if key.startswith(prefix):
                        key = key[len(prefix):]
                key = re.sub(r"\.gamma$", ".weight", re.sub(r"\.beta$", ".bias", key))  # old LayerNorm names
                tensors[key] = tensor.float()
        return cls(tensors)

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def tensor(self, name: str) -> torch.Tensor:
        """The tensor called `name`, or a clear error: a missing name means the weights are not the config's architecture."""
        if name not in self.tensors:
            raise AttnvizError(f"The weights file lacks '{name}': it does not look like the architecture its config names.")
        return self.tensors[name]

    def optional(self, name: str) -> torch.Tensor | None:
        """The tensor called `name`, or None where a checkpoint may leave it out (an untied LM head, tied embeddings)."""
        return self.tensors.get(name)

    def linear(self, name: str, bias: bool, stored_in_out: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W (in, out) and b (out,) of the projection `name` (b None when bias is False)."""
        w = self.tensor(f"{name}.weight")
        w = w if stored_in_out else w.t()  # nn.Linear (out, in) -> (in, out)
        return w.contiguous(), self.tensor(f"{name}.bias") if bias else None

    def norm(self, name: str, cfg: ModelConfig) -> tuple[torch.Tensor, torch.Tensor | None]:
        """γ (and β for a LayerNorm; an RMSNorm has none) of the norm `name`."""
        return self.tensor(f"{name}.weight"), self.tensor(f"{name}.bias") if cfg.norm == "layer" else None


@dataclass(frozen=True)
class LayerNames:
    """Where one layer's tensors sit in a family's checkpoint: `prefix` with '{i}' for the layer, then the names."""

    prefix: str  # "encoder.layer.{i}."
    qkv: tuple[str, ...]  # W_Q, W_K, W_V's projections; one name when stored fused (GPT-2's c_attn)
    out: str  # W_O
    ln1: str  # the norm around attention
    ln2: str  # the norm around the MLP
    ff1: str  # W_1 (SwiGLU's W_up)
    ff2: str  # W_2 (SwiGLU's W_down)
    gate: str = ""  # SwiGLU's W_gate; read only when cfg.mlp == "swiglu"
    stored_in_out: bool = False  # GPT-2's Conv1D: weights already (in, out)


def read_layer(ckpt: Checkpoint, names: LayerNames, cfg: ModelConfig, i: int) -> LayerWeights:
    """Layer i's weights, (in, out), with exactly the biases the config says the architecture has."""
    p = names.prefix.format(i=i)
    linear = lambda name, bias: ckpt.linear(p + name, bias, names.stored_in_out)
    qkv = [linear(n, cfg.qkv_bias) for n in names.qkv]
    w_o, b_o = linear(names.out, cfg.out_bias)
    (ln1_w, ln1_b), (ln2_w, ln2_b) = ckpt.norm(p + names.ln1, cfg), ckpt.norm(p + names.ln2, cfg)
    w_ff1, b_ff1 = linear(names.ff1, cfg.mlp_bias)
    w_ff2, b_ff2 = linear(names.ff2, cfg.mlp_bias)
    w_gate, b_gate = linear(names.gate, cfg.mlp_bias) if cfg.mlp == "swiglu" else (None, None)
    return LayerWeights(
        w_qkv=torch.cat([w for w, _ in qkv], dim=1), b_qkv=torch.cat([b for _, b in qkv]) if cfg.qkv_bias else None,
        w_o=w_o, b_o=b_o, ln1_w=ln1_w, ln1_b=ln1_b, ln2_w=ln2_w, ln2_b=ln2_b,
        w_ff1=w_ff1, b_ff1=b_ff1, w_ff2=w_ff2, b_ff2=b_ff2, w_gate=w_gate, b_gate=b_gate,
    )


def read_layers(ckpt: Checkpoint, names: LayerNames, cfg: ModelConfig) -> list[LayerWeights]:
    return [read_layer(ckpt, names, cfg, i) for i in range(cfg.n_layers)]
