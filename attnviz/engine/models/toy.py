"""A tiny encoder with seeded weights whose every number fits in a heatmap cell.

Same post-LN stack as BERT, with sinusoidal positions (or none, to show that attention without
positions is permutation-equivariant). Weights ~ N(0, 1/d_model) so scores stay readable.
"""

from __future__ import annotations

import torch

from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder, Model
from attnviz.engine.models.stack import LayerWeights, sinusoidal_positions
from attnviz.engine.models.tokenizer import WordTokenizer
from attnviz.errors import AttnvizError

TOY_VOCAB_SIZE = 1024
TOY_MAX_TOKENS = 64


def toy_model(d_model: int = 8, n_heads: int = 2, n_layers: int = 2, d_ff: int | None = None,
              positions: bool = True, seed: int = 0, device: str = "cpu") -> Model:
    for name, value in (("d_model", d_model), ("n_heads", n_heads), ("n_layers", n_layers)):
        if not isinstance(value, int) or value < 1:
            raise AttnvizError(f"toy model: {name} must be a positive whole number, got {value!r}.")
    if d_model % n_heads:
        raise AttnvizError(
            f"toy model: d_model ({d_model}) must be divisible by the number of heads ({n_heads}), "
            f"since d_model = n_heads · d_head."
        )
    if d_model > 512 or n_layers > 12:
        raise AttnvizError("toy model: keep it small (d_model ≤ 512, n_layers ≤ 12).")
    d_ff = d_ff or 2 * d_model
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=g) * std

    std = d_model**-0.5
    layers = [
        LayerWeights(
            w_qkv=randn(d_model, 3 * d_model, std=std), b_qkv=torch.zeros(3 * d_model),
            w_o=randn(d_model, d_model, std=std), b_o=torch.zeros(d_model),
            ln1_w=torch.ones(d_model), ln1_b=torch.zeros(d_model), ln2_w=torch.ones(d_model), ln2_b=torch.zeros(d_model),
            w_ff1=randn(d_model, d_ff, std=std), b_ff1=torch.zeros(d_ff),
            w_ff2=randn(d_ff, d_model, std=d_ff**-0.5), b_ff2=torch.zeros(d_model),
        )
        for _ in range(n_layers)
    ]
    embedder = Embedder(
        word=randn(TOY_VOCAB_SIZE, d_model),
        position=sinusoidal_positions(TOY_MAX_TOKENS, d_model) if positions else None,
    )
    cfg = ModelConfig(n_layers=n_layers, n_heads=n_heads, d_model=d_model, d_ff=d_ff, max_positions=TOY_MAX_TOKENS,
                      activation="gelu", ln_eps=1e-5, positions="sinusoidal" if positions else "none")
    name = "toy" if positions else "toy (no positions)"
    return Model(name, "toy", cfg, embedder, layers, WordTokenizer(TOY_VOCAB_SIZE, TOY_MAX_TOKENS), device=device)
