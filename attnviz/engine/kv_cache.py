"""The KV cache: each layer keeps the keys and values of the tokens already seen, so that a new token
needs only its own query, key and value instead of recomputing the whole prefix.

Keys are kept after RoPE (a token's rotation depends only on its own position, so it never changes)
and before grouped-query attention repeats them: a GQA model stores n_kv_heads heads, not n_heads,
which is the memory it saves. Shapes: B batch, nkv K/V heads, T tokens so far, hs = d_head.
"""

from __future__ import annotations

import torch

from attnviz.errors import AttnvizError

FLOAT32_BYTES = 4  # what attnviz keeps
HALF_BYTES = 2  # bf16 / fp16, as large models are usually served


def kv_cache_bytes_per_token(n_layers: int, n_kv_heads: int, d_head: int, bytes_per_value: int = HALF_BYTES) -> int:
    """n_layers · 2 (K and V) · n_kv_heads · d_head · bytes: what one more token of context costs."""
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("d_head", d_head), ("bytes", bytes_per_value)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise AttnvizError(f"KV cache size: {name} must be a positive whole number, got {value!r}.")
    return n_layers * 2 * n_kv_heads * d_head * bytes_per_value


def kv_cache_bytes_per_token_of_config(config: dict, bytes_per_value: int = HALF_BYTES) -> int:
    """The same for a Hugging Face config.json dict (Llama, Qwen2, Mistral names; no K/V heads given = MHA)."""
    try:
        heads = int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads") or heads)
        d_head = int(config.get("head_dim") or int(config["hidden_size"]) // heads)
        return kv_cache_bytes_per_token(int(config["num_hidden_layers"]), kv_heads, d_head, bytes_per_value)
    except (KeyError, TypeError, ValueError):
        raise AttnvizError("The config lacks num_hidden_layers, num_attention_heads or hidden_size.") from None


class KVCache:
    """One layer's cached K and V (B, nkv, capacity, hs), filled from the left as tokens arrive.

    The buffers are allocated once for the whole generation, so a step writes one token in place
    instead of copying the whole cache into a longer tensor.
    """

    def __init__(self, batch: int, n_kv_heads: int, d_head: int, capacity: int, device="cpu", dtype=torch.float32):
        self.k = torch.zeros(batch, n_kv_heads, capacity, d_head, device=device, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        self.length = 0  # tokens held so far

    @property
    def capacity(self) -> int:
        return self.k.shape[2]

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new tokens' k, v (B, nkv, t, hs); return every cached key and value (B, nkv, length, hs)."""
        t = k.shape[2]
        if self.length + t > self.capacity:
            raise AttnvizError(f"The KV cache holds {self.capacity} tokens; {self.length + t} do not fit.")
        self.k[:, :, self.length : self.length + t] = k
        self.v[:, :, self.length : self.length + t] = v
        self.length += t
        return self.keys, self.values

    @property
    def keys(self) -> torch.Tensor:
        return self.k[:, :, : self.length]  # (B, nkv, length, hs)

    @property
    def values(self) -> torch.Tensor:
        return self.v[:, :, : self.length]  # (B, nkv, length, hs)

    @property
    def nbytes(self) -> int:
        """Bytes held by the tokens cached so far (K and V)."""
        return 2 * self.keys.numel() * self.k.element_size()
