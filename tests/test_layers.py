"""Layers import downward only, and no module imports itself back through others: read from the source with the ast
module (every import: at the top, inside a function, under `if TYPE_CHECKING:`).

The layers and their order (docs/code-map.md): app.py → app_pages → ui → attnviz.lessons →
attnviz.draw / attnviz.analysis → attnviz.engine, with the library's other packages placed where they sit (CHAIN).
A layer may import any layer below it, directly or through others (the chain's transitive closure), and its own
modules; nothing else. A package of attnviz that CHAIN does not place fails the test until it is placed.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("app.py", "app_pages", "ui", "attnviz")

# Each layer, and the layers right below it: what it builds on. Why each sits where it does:
CHAIN: dict[str, tuple[str, ...]] = {
    "app": ("ui",),  # the entry point: st.navigation over the pages (named by path, not imported)
    "app_pages": ("ui",),  # one thin script per page
    "ui": ("attnviz", "attnviz.server_settings", "attnviz.lecture", "attnviz.lessons", "attnviz.components"),
    "attnviz": ("attnviz.notebook", "attnviz.engine"),  # the public API: attnviz/__init__.py, attnviz/efficient.py
    "attnviz.server_settings": ("attnviz.lecture",),  # the class server's settings name the lecture store's limits
    "attnviz.lecture": ("attnviz.notebook",),  # a lecture's record is a notebook document of the views it showed
    "attnviz.notebook": ("attnviz.lessons", "attnviz.components"),  # show() / save_html(): the lessons' views
    "attnviz.lessons": ("attnviz.draw", "attnviz.analysis"),  # one sub-package per page
    "attnviz.draw": ("attnviz.analysis",),  # shared drawing: it draws numbers analysis computes (a head's entropy)
    "attnviz.analysis": ("attnviz.engine",),  # numbers about patterns
    "attnviz.training": ("attnviz.engine",),  # the scripts that make the shipped models: nothing imports them
    "attnviz.engine": ("attnviz.tasks",),  # what computes (the GRU seq2seq reads its task's words)
    "attnviz.tasks": ("attnviz.base",),  # the small tasks models are trained on
    # the heatmap component's JS and CSS, for each host: the browser side of draw's payloads, in draw's palette
    "attnviz.components": ("attnviz.draw",),
    "attnviz.base": (),  # attnviz.errors, attnviz.paths: what every layer may use
}
BASE = ("attnviz.errors", "attnviz.paths")
PUBLIC_API = ("attnviz", "attnviz.efficient")
STREAMLIT_LAYERS = ("app", "app_pages", "ui")  # attnviz never imports streamlit


def below(layer: str, chain: dict[str, tuple[str, ...]] = CHAIN) -> set[str]:
    """Every layer `layer` may import: the ones right below it, theirs, and so on."""
    seen: set[str] = set()
    todo = list(chain[layer])
    while todo:
        lower = todo.pop()
        if lower not in seen:
            seen.add(lower)
            todo += chain[lower]
    return seen


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files(root: Path) -> dict[str, Path]:
    """Module name -> file, for every Python file of the app and the library under root."""
    files = {}
    for source in SOURCES:
        top = root / source
        paths = [top] if top.suffix == ".py" else sorted(top.rglob("*.py")) if top.is_dir() else []
        files.update({module_name(path, root): path for path in paths if path.exists()})
    return files


def imported(path: Path, module: str, modules: set[str]) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, relative ones resolved. `from pkg import name` is pkg.name when
    that is a module of ours, else pkg (name is then something pkg defines)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.append((node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base))
    return list(dict.fromkeys(found))  # `from pkg import a, b` of one module: said once


def layer_of(module: str) -> str | None:
    """The CHAIN layer a module of ours belongs to (None: a package of attnviz that CHAIN does not place)."""
    top = module.split(".")[0]
    if top != "attnviz":
        return top
    if module in PUBLIC_API:
        return "attnviz"
    if module in BASE:
        return "attnviz.base"
    layer = ".".join(module.split(".")[:2])
    return layer if layer in CHAIN else None


def import_graph(root: Path = ROOT) -> dict[str, list[tuple[int, str]]]:
    """Module -> (line, module of ours it imports), over app.py, app_pages, ui and attnviz."""
    files = source_files(root)
    ours = set(files)
    return {module: [(line, name) for line, name in imported(path, module, ours) if name in ours and name != module]
            for module, path in files.items()}


def upward_imports(root: Path = ROOT, chain: dict[str, tuple[str, ...]] = CHAIN) -> list[str]:
    """Every import from a module into a layer that is not below its own (nor its own)."""
    out = []
    for module, imports in import_graph(root).items():
        here = layer_of(module)
        if here is None:
            out.append(f"{module}: attnviz.{module.split('.')[1]} has no place in the layers (tests/test_layers.py CHAIN)")
            continue
        allowed = below(here, chain) | {here}
        out += [f"{module}:{line} imports {name} ({layer_of(name)} is not below {here})"
                for line, name in imports if layer_of(name) not in allowed]
    return out


def streamlit_outside_ui(root: Path = ROOT) -> list[str]:
    files = source_files(root)
    return [f"{module}:{line} imports {name}" for module, path in files.items()
            if layer_of(module) not in STREAMLIT_LAYERS
            for line, name in imported(path, module, set(files)) if name.split(".")[0] == "streamlit"]


def circles(root: Path = ROOT) -> list[list[str]]:
    """Every set of modules that import each other round a circle (the strongly connected components of the import
    graph with more than one module, Tarjan's algorithm), each sorted."""
    graph = {module: sorted({name for _, name in imports}) for module, imports in import_graph(root).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


# ---- the code as it is ----------------------------------------------------------------------------------------------


def test_the_chain_has_no_circle_and_places_every_layer_it_names():
    for layer, lower in CHAIN.items():
        assert set(lower) <= set(CHAIN), f"{layer} builds on an unknown layer"
        assert layer not in below(layer), f"{layer} is below itself"


def test_every_import_runs_down_the_layers():
    assert upward_imports() == []


def test_no_module_imports_itself_back_round_a_circle():
    assert circles() == []


def test_only_the_app_and_ui_import_streamlit():
    assert streamlit_outside_ui() == []


def test_the_check_reads_the_whole_app():
    graph = import_graph()
    assert {"app", "app_pages.explorer", "ui.state", "attnviz.engine.attention"} <= set(graph)
    assert ("ui" in {layer_of(name) for _, name in graph["app_pages.explorer"]}
            and any(name.startswith("attnviz.engine") for _, name in graph["attnviz.lessons.masks.gallery"]))


# ---- the check itself, on small fake trees --------------------------------------------------------------------------


def fake_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, source in {"attnviz/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(tmp_path).parents:  # every folder a package
            if parent.parts and parent.parts[0] != "app_pages":
                (tmp_path / parent / "__init__.py").touch()
        path.write_text(source)
    return tmp_path


@pytest.mark.parametrize("files, expected", [
    ({"attnviz/engine/bad.py": "from attnviz.training.number_words import digits_text\n",
      "attnviz/training/number_words.py": ""},
     "attnviz.engine.bad:1 imports attnviz.training.number_words"),
    ({"attnviz/engine/bad.py": "def f():\n    import attnviz\n    return attnviz\n"}, "imports attnviz ("),
    ({"attnviz/engine/bad.py": "from attnviz import load_model\n"}, "imports attnviz ("),
    ({"attnviz/engine/models/bad.py": "from ...lessons.why_attention import accuracy\n",
      "attnviz/lessons/why_attention/__init__.py": ""}, "imports attnviz.lessons.why_attention"),
    ({"attnviz/draw/bad.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from attnviz.lessons.x import y\n",
      "attnviz/lessons/x.py": ""}, "attnviz.draw.bad:3 imports attnviz.lessons.x"),
    ({"attnviz/analysis/bad.py": "def f():\n    from attnviz.draw import figure\n", "attnviz/draw/figure.py": ""},
     "imports attnviz.draw.figure (attnviz.draw is not below attnviz.analysis)"),
    ({"ui/bad.py": "import app_pages.explorer\n", "app_pages/explorer.py": ""}, "ui.bad:1 imports app_pages.explorer"),
    ({"attnviz/gadgets/thing.py": ""}, "attnviz.gadgets has no place in the layers"),
])
def test_the_check_finds_each_kind_of_upward_import(tmp_path, files, expected):
    found = upward_imports(fake_tree(tmp_path, files))
    assert any(expected in v for v in found), found


def test_a_downward_import_passes(tmp_path):
    root = fake_tree(tmp_path, {
        "attnviz/engine/ok.py": "from attnviz.errors import AttnvizError\nfrom attnviz.tasks import x\nfrom . import masks\n",
        "attnviz/engine/masks.py": "", "attnviz/errors.py": "", "attnviz/tasks/x.py": "",
        "attnviz/draw/ok.py": "from attnviz.analysis import stats\n", "attnviz/analysis/stats.py": "",
        "ui/ok.py": "import attnviz\nfrom attnviz.engine.masks import y\n", "app_pages/page.py": "from ui import ok\n"})
    assert upward_imports(root) == []


@pytest.mark.parametrize("files, circle", [
    ({"attnviz/analysis/a.py": "from attnviz.analysis.b import f\n",
      "attnviz/analysis/b.py": "def f():\n    from attnviz.analysis.a import g  # noqa: PLC0415\n"},
     ["attnviz.analysis.a", "attnviz.analysis.b"]),
    ({"attnviz/lessons/m.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import Point\n",
      "attnviz/lessons/c.py": "from attnviz.lessons import m\n"},
     ["attnviz.lessons.c", "attnviz.lessons.m"]),
    ({"ui/a.py": "import ui.b\n", "ui/b.py": "from ui import c\n", "ui/c.py": "from ui.a import x\n"},
     ["ui.a", "ui.b", "ui.c"]),
])
def test_the_check_finds_a_circle_however_it_is_imported(tmp_path, files, circle):
    assert circles(fake_tree(tmp_path, files)) == [circle]


def test_a_package_that_re_exports_its_modules_is_no_circle(tmp_path):
    root = fake_tree(tmp_path, {"attnviz/engine/models/__init__.py": "from attnviz.engine.models.model import Model\n",
                                "attnviz/engine/models/model.py": "from attnviz.engine.models.config import C\n",
                                "attnviz/engine/models/config.py": ""})
    assert circles(root) == []


def test_the_check_finds_streamlit_in_the_library(tmp_path):
    root = fake_tree(tmp_path, {"attnviz/draw/bad.py": "def f():\n    import streamlit as st\n",
                                "ui/ok.py": "import streamlit as st\n"})
    assert streamlit_outside_ui(root) == ["attnviz.draw.bad:2 imports streamlit"]
