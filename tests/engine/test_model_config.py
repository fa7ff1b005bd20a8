"""ModelConfig is the one place an architecture difference lives: a frozen dataclass, every field documented,
and no code that probes a model, its config or its weights with getattr/hasattr instead of reading a field."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest
import torch

from attnviz.engine.models.config import ACTIVATION_NAMES, ModelConfig
from attnviz.engine.models.stack import ACTIVATIONS
from attnviz.engine.rope import rope_frequencies
from attnviz.errors import AttnvizError

ROOT = Path(__file__).resolve().parents[2] / "attnviz"
SMALL = dict(n_layers=2, n_heads=4, d_model=32, d_ff=64, max_positions=16, activation="gelu", ln_eps=1e-5)


def test_the_config_is_frozen_and_every_field_is_documented_where_it_is_declared():
    assert dataclasses.is_dataclass(ModelConfig) and ModelConfig.__dataclass_params__.frozen
    cfg = ModelConfig(**SMALL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.pre_ln = True
    source = inspect.getsource(ModelConfig)
    for f in dataclasses.fields(ModelConfig):
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{f.name}:"))
        assert "#" in line and len(line.split("#", 1)[1].strip()) > 10, f"ModelConfig.{f.name} has no comment saying what it is"


def test_defaults_are_filled_in_and_contradictions_refused():
    cfg = ModelConfig(**SMALL)
    assert (cfg.n_kv_heads, cfg.d_head, cfg.windows, cfg.group_size, cfg.shared_window) == (4, 8, (None, None), 1, None)
    assert ModelConfig(**SMALL, windows=(3, 3)).shared_window == 3
    rope = dict(positions="rope", inv_freq=rope_frequencies(8), norm="rms", mlp="swiglu", n_kv_heads=2)
    assert ModelConfig(**SMALL, **rope).group_size == 2
    for bad, message in ((dict(norm="batch"), "norm 'batch'"), (dict(positions="alibi"), "positions 'alibi'"),
                         (dict(n_kv_heads=3), "shared evenly"), (dict(windows=(3,)), "2 layers"),
                         (dict(positions="rope"), "RoPE frequencies"), (dict(inv_freq=torch.ones(4)), "RoPE frequencies"),
                         (dict(n_heads=5), "not divisible")):
        with pytest.raises(AttnvizError, match=message):
            ModelConfig(**{**SMALL, **bad})


def test_every_activation_the_config_accepts_is_one_the_layer_computes():
    assert set(ACTIVATION_NAMES) == set(ACTIVATIONS)


def _probes(path: Path) -> list[str]:
    """'file:line getattr(first argument)' for every getattr/hasattr call in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.func.id}({ast.unparse(node.args[0])})")
    return found


def test_the_model_code_reads_fields_and_never_probes():
    probes = [p for f in sorted((ROOT / "engine" / "models").glob("*.py")) for p in _probes(f)]
    assert probes == [], "read a documented ModelConfig field instead of probing: " + ", ".join(probes)


def test_nothing_in_attnviz_probes_a_model_its_config_its_layers_or_its_traces():
    """getattr with a computed name over fields (getattr(t, name)) is a read, not a probe, and is allowed."""
    suspects = ("model", "cfg", "lw", "trace", "layers")
    probes = []
    for f in sorted(ROOT.rglob("*.py")):
        for p in _probes(f):
            first = p.split("(", 1)[1].rstrip(")")
            if any(s in first for s in suspects):
                probes.append(p)
    assert probes == [], "a model, config, layer or trace attribute is read by probing: " + ", ".join(probes)
