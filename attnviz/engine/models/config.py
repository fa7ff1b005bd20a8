"""ModelConfig: the one config of every stack attnviz runs, after TransformerLens's HookedTransformerConfig.

Every way the architectures differ is a documented field here, so the layer code reads a field and never
probes a config or a weight with getattr/hasattr. The families as fields:

                 BERT, RoBERTa, DistilBERT, toy    GPT-2       Llama, Qwen2, Mistral    BART enc. / dec.
    norm         "layer"                           "layer"     "rms"                    "layer"
    pre_ln       False (post-norm)                 True        True                     False
    final_norm   False                             True        True                     False
    positions    "learned" (toy: "sinusoidal"      "learned"   "rope"                   "learned"
                 or "none")
    mlp          "ffn"                             "ffn"       "swiglu"                 "ffn"
    causal       False                             True        True                     False / True
    n_kv_heads   n_heads                           n_heads     ≤ n_heads (GQA)          n_heads
    windows      none                              none        Mistral, Qwen2 may       none
    biases       all                               all         Qwen2: q, k, v; Llama:   all
                                                               attention_bias, mlp_bias
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attnviz.errors import AttnvizError

NORMS = ("layer", "rms")
POSITIONS = ("learned", "sinusoidal", "rope", "none")
MLPS = ("ffn", "swiglu")
ACTIVATION_NAMES = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "silu")  # stack.ACTIVATIONS' keys


@dataclass(frozen=True)
class ModelConfig:
    """The shape and the architecture switches of one transformer stack. Sizes: C = d_model, F = d_ff,
    nh = n_heads, nkv = n_kv_heads, hs = d_head."""

    n_layers: int  # transformer layers (blocks)
    n_heads: int  # query heads per layer (nh)
    d_model: int  # width of the residual stream (C)
    d_ff: int  # hidden width of the MLP (F)
    max_positions: int  # positions the model was trained for: its position table, or RoPE's context
    activation: str  # the MLP's non-linearity: a key of stack.ACTIVATIONS ("gelu", "gelu_new", "relu", "silu", ...)
    ln_eps: float  # ε of every norm inside the layers (LayerNorm's or RMSNorm's)
    causal: bool = False  # a decoder: the causal mask is part of the architecture and always applied
    norm: str = "layer"  # "layer": (x − μ)/√(σ² + ε)·γ + β;  "rms": x/√(mean x² + ε)·g (no centring, no bias)
    pre_ln: bool = False  # True: pre-norm, x + f(N(x)) (GPT-2, Llama); False: post-norm, N(x + f(x)) (BERT, BART)
    final_norm: bool = False  # a norm after the last layer (GPT-2's ln_f, Llama's norm); post-norm stacks have none
    positions: str = "learned"  # "learned" or "sinusoidal": a table added to the token embeddings;
    #                             "rope": q and k rotated by position inside every layer; "none": no positions at all
    mlp: str = "ffn"  # "ffn": act(x W_1 + b_1) W_2 + b_2;  "swiglu": (act(x W_gate) ⊙ x W_1) W_2, W_1 = W_up, W_2 = W_down
    n_kv_heads: int | None = None  # K/V heads per layer (nkv); fewer than n_heads = grouped-query attention. None: n_heads
    d_head: int | None = None  # width of one head (hs); Llama-family configs may set it apart from C / nh. None: C // nh
    qkv_bias: bool = True  # W_Q, W_K, W_V have biases (BERT, GPT-2, BART, Qwen2; Llama with attention_bias)
    out_bias: bool = True  # W_O has a bias (not Qwen2, Mistral; Llama with attention_bias)
    mlp_bias: bool = True  # the MLP's projections have biases (not the Llama family, unless mlp_bias)
    rope_type: str = "default"  # positions == "rope": how its frequencies are scaled (rope_types.ROPE_TYPES)
    inv_freq: torch.Tensor | None = field(default=None, compare=False, repr=False)  # RoPE's θ_i (hs/2,); else None
    windows: tuple[int | None, ...] = ()  # per layer: a sliding window of that many keys (self included), or None
    #                                       (full attention); () = None for every layer

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # frozen: fill in the defaults once
        if self.n_kv_heads is None:
            set_("n_kv_heads", self.n_heads)
        if self.d_head is None:
            if self.d_model % self.n_heads:
                raise AttnvizError(f"The config's d_model {self.d_model} is not divisible by its {self.n_heads} heads.")
            set_("d_head", self.d_model // self.n_heads)
        set_("windows", tuple(self.windows) or (None,) * self.n_layers)
        for name, value, allowed in (("norm", self.norm, NORMS), ("positions", self.positions, POSITIONS),
                                     ("mlp", self.mlp, MLPS), ("activation", self.activation, ACTIVATION_NAMES)):
            if value not in allowed:
                raise AttnvizError(f"The model config's {name} '{value}' is not one attnviz runs ({', '.join(allowed)}).")
        if self.n_kv_heads < 1 or self.n_heads % self.n_kv_heads:
            raise AttnvizError(f"{self.n_heads} query heads cannot be shared evenly by {self.n_kv_heads} key/value heads.")
        if len(self.windows) != self.n_layers:
            raise AttnvizError(f"The config gives {len(self.windows)} sliding windows for {self.n_layers} layers.")
        rope = self.positions == "rope"
        if rope != (self.inv_freq is not None) or (rope and tuple(self.inv_freq.shape) != (self.d_head // 2,)):
            raise AttnvizError("RoPE frequencies (d_head / 2 of them) go with positions='rope', and only with it.")

    @property
    def group_size(self) -> int:
        """Query heads per K/V head (1 = plain multi-head attention, n_heads = multi-query)."""
        return self.n_heads // self.n_kv_heads

    @property
    def shared_window(self) -> int | None:
        """The sliding window when every layer has the same one (Mistral), else None."""
        distinct = set(self.windows)
        return distinct.pop() if len(distinct) == 1 else None

