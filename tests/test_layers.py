"""Layers import downward only, read from the source with the ast module (every import, at the top or inside a
function): nothing under attnviz/engine imports training, lessons, analysis, draw, notebook or the top package
attnviz itself; nothing under attnviz/training imports a lesson."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attnviz"
ENGINE_MUST_NOT = ("attnviz.training", "attnviz.lessons", "attnviz.analysis", "attnviz.draw", "attnviz.notebook")
TRAINING_MUST_NOT = ("attnviz.lessons",)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved; `from pkg import name` gives pkg.name too,
    since name may be a module."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def breaks(name: str, forbidden: tuple[str, ...], top_package_too: bool) -> bool:
    """Whether importing `name` reaches a forbidden layer (or, top_package_too, names the top package itself)."""
    if top_package_too and name == "attnviz":
        return True
    return any(name == f or name.startswith(f + ".") for f in forbidden)


def violations(folder: str, forbidden: tuple[str, ...], top_package_too: bool) -> list[str]:
    out = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for line, name in imported(path):
            # `from attnviz import x` shows as "attnviz" and "attnviz.x": the first is the top package itself
            if breaks(name, forbidden, top_package_too):
                out.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    return out


def test_the_engine_imports_no_layer_above_it_nor_the_top_package():
    assert violations("engine", ENGINE_MUST_NOT, top_package_too=True) == []


def test_training_imports_no_lesson():
    assert violations("training", TRAINING_MUST_NOT, top_package_too=False) == []


@pytest.mark.parametrize("source, folder, forbidden, top, expected", [
    ("from attnviz.training.number_words import digits_text\n", "engine", ENGINE_MUST_NOT, True,
     "attnviz.training.number_words"),
    ("def f():\n    import attnviz\n    return attnviz\n", "engine", ENGINE_MUST_NOT, True, "attnviz"),
    ("from attnviz import load_model\n", "engine", ENGINE_MUST_NOT, True, "attnviz"),
    ("from ...lessons.why_attention import accuracy\n", "engine/models", ENGINE_MUST_NOT, True,
     "attnviz.lessons.why_attention"),
    ("def f():\n    from attnviz.lessons.x import y\n", "training", TRAINING_MUST_NOT, False, "attnviz.lessons.x"),
])
def test_the_check_finds_each_kind_of_upward_import(tmp_path, monkeypatch, source, folder, forbidden, top, expected):
    fake = tmp_path / "attnviz"
    (fake / folder).mkdir(parents=True)
    (fake / folder / "bad.py").write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    found = violations(folder.split("/")[0], forbidden, top)
    assert any(v.endswith(f"imports {expected}") for v in found), found


def test_a_downward_import_passes(tmp_path, monkeypatch):
    fake = tmp_path / "attnviz"
    (fake / "engine").mkdir(parents=True)
    (fake / "engine" / "ok.py").write_text("from attnviz.errors import AttnvizError\nfrom attnviz.tasks import x\n"
                                           "from . import masks\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert violations("engine", ENGINE_MUST_NOT, True) == []
