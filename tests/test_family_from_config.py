"""Code above the engine reads a model's architecture from its ModelConfig's fields (norm, mlp, positions, pre_ln,
n_kv_heads, ...), never from its family's name: no `.family` read and no comparison with a family name (read from
the ast, so a new family needs no edit there). The families themselves are registered once, in
engine/models/loading.py's FAMILIES."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnviz.engine.models.loading import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
ABOVE_THE_ENGINE = ("attnviz/lessons", "attnviz/analysis", "attnviz/draw", "attnviz/notebook", "ui", "app_pages")
NAMES = set(FAMILIES) | {"toy"}


def _names_in(node: ast.AST) -> set[str]:
    """The family names a comparison's operand spells out: 'llama', or ('llama', 'qwen2') and the like."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def family_reads(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "family" and isinstance(node.ctx, ast.Load):
            found.append(f"line {node.lineno}: .family")
        elif isinstance(node, ast.Compare):
            names = set().union(*(_names_in(n) for n in (node.left, *node.comparators)))
            if names:
                found.append(f"line {node.lineno}: compared with {sorted(names)}")
    return found


def test_nothing_above_the_engine_reads_a_family_name():
    problems = [f"{path.relative_to(ROOT)} {hit}" for folder in ABOVE_THE_ENGINE
                for path in sorted((ROOT / folder).rglob("*.py")) for hit in family_reads(path.read_text("utf-8"))]
    assert problems == []


@pytest.mark.parametrize("source", ["if model.family == 'llama':\n    pass\n",
                                    "x = cfg_name in ('gpt2', 'bert')\n",
                                    "def f(m):\n    return 'toy' != m.name\n"])
def test_the_check_finds_a_family_name(source):
    assert family_reads(source)
