"""How big a model's weights are as float32, found out before anything is downloaded or loaded.

Why before: a hub name or a folder can name a 7B model (28 GB as float32); loading it would take the
server, and every student on it, down. So the size is read from what costs nothing: for a hub name the
safetensors headers the hub serves (huggingface_hub.get_safetensors_metadata, no weights fetched), for a
folder the headers of its .safetensors files (8 bytes of little-endian length, then a JSON header naming
every tensor's shape), and for a folder with only a config.json an estimate from the config.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from huggingface_hub import get_safetensors_metadata, try_to_load_from_cache

from attnviz.errors import AttnvizError

FLOAT32_BYTES = 4
HEADER_LIMIT = 100_000_000  # the safetensors format's own cap on a header's length


def check_size(weights_bytes: int | None, max_bytes: int | None, name: str) -> None:
    """Refuse a model whose float32 weights exceed max_bytes (None: no cap, or size unknown = let the loader say)."""
    if max_bytes is None or weights_bytes is None or weights_bytes <= max_bytes:
        return
    raise AttnvizError(f"'{name[:80]}' has about {weights_bytes / 1e9:.1f} GB of float32 weights; this server loads "
                       f"models of at most {max_bytes / 1e9:.1f} GB (max_weights_gb in its settings).")


def folder_float32_bytes(folder: Path) -> int | None:
    """float32 bytes of a local folder's weights: from its safetensors headers, else estimated from its
    config.json; None when it has neither (the loader then says what is missing)."""
    files = sorted(folder.glob("*.safetensors"))
    if files:
        return sum(safetensors_file_parameters(f) for f in files) * FLOAT32_BYTES
    config = folder / "config.json"
    if not config.is_file():
        return None
    try:
        return config_parameters(json.loads(config.read_text(encoding="utf-8"))) * FLOAT32_BYTES
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, ValueError):
        return None  # the loader's read_config names the bad file


def safetensors_file_parameters(path: Path) -> int:
    """The number of numbers in a .safetensors file, read from its header alone."""
    with open(path, "rb") as f:
        head = f.read(8)
        (length,) = struct.unpack("<Q", head) if len(head) == 8 else (HEADER_LIMIT + 1,)
        if length > HEADER_LIMIT:
            raise AttnvizError(f"'{path.name}' is not a valid safetensors file.")
        try:
            header = json.loads(f.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise AttnvizError(f"'{path.name}' is not a valid safetensors file.") from None
    return sum(math.prod(t.get("shape", [])) for name, t in header.items() if name != "__metadata__")


def config_parameters(config: dict) -> int:
    """An estimate of a transformer's parameter count from its Hugging Face config (embeddings, attention with
    grouped key/value heads, a plain or gated feed-forward, an untied output head): right to within ~10%,
    which is all a size cap needs."""
    get = lambda *names, default=0: next((int(config[n]) for n in names if config.get(n) is not None), default)
    d = get("hidden_size", "d_model", "n_embd", "dim")
    layers = get("num_hidden_layers", "n_layer", "num_layers") or get("encoder_layers") + get("decoder_layers")
    ffn = get("intermediate_size", "n_inner", "ffn_dim", "encoder_ffn_dim", "hidden_dim", default=4 * d)
    heads = get("num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", default=1)
    kv_dim = d * get("num_key_value_heads", default=heads) // max(heads, 1)
    gated = str(config.get("hidden_act", config.get("activation_function", ""))).lower() in {"silu", "swiglu"}
    vocab = get("vocab_size")
    embeddings = vocab * d * (1 if config.get("tie_word_embeddings", True) else 2)
    per_layer = d * (2 * d + 2 * kv_dim) + (3 if gated else 2) * d * ffn
    return embeddings + layers * per_layer


def hub_float32_bytes(name: str) -> int:
    """float32 bytes of a hub model's weights, from the hub's safetensors metadata (no weights downloaded), or
    from the local cache when the hub cannot be asked; refuses when neither can tell."""
    try:
        return sum(get_safetensors_metadata(name).parameter_count.values()) * FLOAT32_BYTES
    except Exception as err:
        kind = type(err).__name__
        if "RepositoryNotFound" in kind or "GatedRepo" in kind:
            raise AttnvizError(f"There is no public model '{name}' on the Hugging Face hub.") from None
        cached = cached_hub_folder(name)
        size = folder_float32_bytes(cached) if cached is not None else None
        if size is None:
            raise AttnvizError(f"Could not find out how big '{name}' is (the hub is not reachable, or it has no "
                               f"safetensors weights), so it is not downloaded. Use a model this server offers.") from None
        return size


def cached_hub_folder(name: str) -> Path | None:
    """The local snapshot folder of a hub model already in the cache, else None."""
    found = try_to_load_from_cache(name, "config.json")
    return Path(found).parent if isinstance(found, str) else None
