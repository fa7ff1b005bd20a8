"""The models attnviz trains and ships inside the package (attnviz/assets/models/<name>/): the one registry.

Each has a folder name ("attnviz-tiny-llama"), the short name the app's pickers and load_model take
("tiny-llama"), the SHA-256 of its model.safetensors (retrain: python -m attnviz.training.<script>, then update it
here), and its kind: a transformer (load_model gives a Model with heads) or a GRU encoder–decoder (a GRUSeq2Seq,
attnviz/engine/gru_seq2seq.py: the Why attention lesson; no heads).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from attnviz.errors import AttnvizError
from attnviz.paths import MODELS

TRANSFORMER, GRU = "transformer", "gru"


@dataclass(frozen=True)
class ShippedModel:
    name: str  # its folder in attnviz/assets/models/, and the name it carries everywhere
    sha256: str  # of its model.safetensors
    script: str  # the training script that makes it again: python -m attnviz.training.<script>
    kind: str  # TRANSFORMER or GRU

    @property
    def short(self) -> str:
        """The name the pickers show and load_model takes: 'tiny-llama' for 'attnviz-tiny-llama'."""
        return self.name.removeprefix("attnviz-")


SHIPPED: dict[str, ShippedModel] = {m.name: m for m in (
    ShippedModel("attnviz-tiny-llama", "e34a135ef6ba4ebb601175ba7cf45f58b3ea80612744d712cbf9a680be53ac8e",
                 "train_tiny_llama", TRANSFORMER),
    ShippedModel("attnviz-tiny-bart", "3d4cf7b605a38b9d608131a3d7a7c6ae7b2ce3420bad743374faaaa184ff1c4d",
                 "train_tiny_bart", TRANSFORMER),
    ShippedModel("attnviz-gru-bottleneck", "550d6510664a3b5b14133bf567abf7b773e2301f553b5467fc67b53666f59d53",
                 "train_gru_seq2seq", GRU),
    ShippedModel("attnviz-gru-attention", "ffeeda4f06a0398177a72db352e635fbe7e6f9b127819ef76f0fcb0123d23f4c",
                 "train_gru_seq2seq", GRU),
)}


def shipped_model(name: str) -> ShippedModel | None:
    """The shipped model a name means, by its folder name or its short name (any case); None for another name."""
    key = name.strip().lower()
    return SHIPPED.get(key) or SHIPPED.get("attnviz-" + key)


def shipped_model_folder(name: str, root: Path = MODELS) -> Path:
    """The folder of a shipped model (root/<name>), once its model.safetensors is there with its known SHA-256."""
    model = shipped_model(name)
    if model is None:
        raise AttnvizError(f"'{name}' is not a model attnviz ships: choose one of {', '.join(short_names())}.")
    weights = root / model.name / "model.safetensors"
    if not weights.exists():
        raise AttnvizError(f"The shipped model '{model.name}' is missing: no {weights}. Reinstall attnviz, restore it "
                           f"from git, or retrain it with: python -m attnviz.training.{model.script}")
    stat = weights.stat()
    if sha256_of(str(weights), stat.st_size, stat.st_mtime_ns) != model.sha256:
        raise AttnvizError(f"The weights of '{model.name}' ({weights}) do not match their known SHA-256: they were "
                           f"changed or damaged. Restore them from git (git checkout -- {weights.name}), or, after "
                           "retraining on purpose, update SHIPPED in attnviz/engine/shipped.py.")
    return root / model.name


def short_names(kind: str | None = None) -> list[str]:
    """The short names of the shipped models (of one kind, if given), in the registry's order."""
    return [m.short for m in SHIPPED.values() if kind is None or m.kind == kind]


@lru_cache(maxsize=8)
def sha256_of(path: str, size: int, mtime_ns: int) -> str:  # size and mtime key the cache
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
