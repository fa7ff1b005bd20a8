"""KV-cache memory per token: multi-head (MHA) vs grouped-query (GQA) vs multi-query (MQA) attention.

    bytes per token = n_layers · 2 (K and V) · n_kv_heads · d_head · bytes per value

MHA keeps one K/V head per query head, GQA one per group of query heads, MQA a single one.
Values are counted at 16 bits (2 bytes), as large models are usually served.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.engine.kv_cache import HALF_BYTES, kv_cache_bytes_per_token


@dataclass(frozen=True)
class KnownConfig:
    """Facts from a model's published config.json on the Hugging Face hub (source = its address)."""

    name: str
    n_layers: int  # num_hidden_layers
    n_heads: int  # num_attention_heads
    n_kv_heads: int  # num_key_value_heads (MHA when equal to n_heads)
    d_head: int  # hidden_size / num_attention_heads
    source: str


# hidden_size / heads: Llama-2-7B 4096/32, Llama-3-8B 4096/32, Mistral-7B 4096/32, Llama-2-70B 8192/64, Falcon-7B 4544/71.
KNOWN_CONFIGS = [
    KnownConfig("Llama-2-7B", 32, 32, 32, 128, "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json"),
    KnownConfig("Llama-3-8B", 32, 32, 8, 128, "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"),
    KnownConfig("Mistral-7B-v0.1", 32, 32, 8, 128,
                "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json"),
    KnownConfig("Llama-2-70B", 80, 64, 8, 128, "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json"),
    KnownConfig("Falcon-7B (multi_query)", 32, 71, 1, 64, "https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json"),
]


def attention_kind(n_heads: int, n_kv_heads: int) -> str:
    if n_kv_heads == n_heads:
        return "MHA"
    return "MQA" if n_kv_heads == 1 else "GQA"


def variants_of(n_layers: int, n_heads: int, n_kv_heads: int, d_head: int) -> list[dict]:
    """The same model's cache per token under MHA, its own K/V heads, and MQA (rows for a table/chart)."""
    rows = []
    for label, kv in (("MHA", n_heads), (f"this model ({attention_kind(n_heads, n_kv_heads)})", n_kv_heads),
                      ("MQA", 1)):
        if any(r["K/V heads"] == kv for r in rows):
            continue  # the model already is MHA or MQA: one row says it
        rows.append({"attention": label, "K/V heads": kv,
                     "bytes per token": kv_cache_bytes_per_token(n_layers, kv, d_head, HALF_BYTES)})
    return rows


def known_models_table() -> list[dict]:
    """One row per well-known model: its config facts, kind, and cache per token (and per 4096-token context)."""
    rows = []
    for c in KNOWN_CONFIGS:
        per_token = kv_cache_bytes_per_token(c.n_layers, c.n_kv_heads, c.d_head, HALF_BYTES)
        rows.append({"model": c.name, "layers": c.n_layers, "query heads": c.n_heads, "K/V heads": c.n_kv_heads,
                     "d_head": c.d_head, "attention": attention_kind(c.n_heads, c.n_kv_heads),
                     "KiB per token": per_token / 1024, "GiB per 4096 tokens": per_token * 4096 / 2**30,
                     "source": c.source})
    return rows


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # unreachable
