"""A class arriving at once at a server nobody has opened: no session sees "Truth check unavailable".

On main before the fix, 18 of 20 such sessions saw it: transformers builds its modules lazily, and several
threads importing it for the first time at once could see a half-made one. Plain `streamlit run app.py` here,
the way a lecturer starts it without the class server (which warms its processes first).
"""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser_helpers import streamlit_server

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))
from streamlit_client import PageSession  # noqa: E402

CLASS = 20


async def arrive_at_once(url: str) -> list:
    async def student(i: int):
        session = PageSession(url, urlencode({"text": f"Student {i} asks why the cat sat on the mat."}))
        await session.open()
        try:
            return await session.rerun(timeout=240)
        finally:
            await session.close()

    return await asyncio.gather(*(student(i) for i in range(CLASS)))


@pytest.mark.timeout(300)
def test_twenty_sessions_at_a_fresh_server_see_no_truth_check_warning():
    with streamlit_server() as url:
        runs = asyncio.run(arrive_at_once(url))
    assert not [e for run in runs for e in run.exceptions]
    warnings = [a for run in runs for a in run.alerts if "Truth check unavailable" in a]
    assert not warnings, f"{len(warnings)} of {CLASS} sessions: {warnings[0]}"
    assert sum("matches transformers" in a for run in runs for a in run.alerts) == CLASS


@pytest.mark.timeout(300)
def test_a_server_nobody_has_opened_warms_its_default_model(tmp_path, monkeypatch):
    """`streamlit run app.py` warms the default model from its start (app.py's st.App, ui/at_start.py), before any
    page is opened: the process's own figures (ui/server_stats.py, written when ATTNVIZ_STATS_FOLDER names a folder)
    show the model and the Explorer's first run in the shared caches and the warming over, with no session ever
    opened. A script without st.App ran no code of the app's until a first page was opened: it wrote nothing."""
    monkeypatch.setenv("ATTNVIZ_STATS_FOLDER", str(tmp_path))
    seen = {}
    with streamlit_server():
        deadline = time.time() + 240
        while time.time() < deadline:
            for path in tmp_path.glob("*.json"):
                try:
                    seen = json.loads(path.read_text())
                except (OSError, ValueError):  # being written
                    continue
            if seen.get("shared_cache_entries", 0) >= 2 and "attnviz-warm" not in seen.get("thread_names", {}):
                break
            time.sleep(0.5)
    assert seen, "the server wrote no figures: it ran none of the app's code before a page was opened"
    assert seen["sessions"] == 0 and seen["sessions_kept"] == 0, seen
    assert seen["shared_cache_entries"] >= 2 and "attnviz-warm" not in seen["thread_names"], seen


def _project_imports(path: Path) -> list[tuple[ast.Import | ast.ImportFrom, list[str]]]:
    """The import statements of a script that name attnviz or ui, in order, each with the module names it imports."""
    nodes = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom))]
    named = [(node, [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
             for node in nodes]
    return [(node, names) for node, names in named if any(n.split(".")[0] in ("attnviz", "ui") for n in names)]


def test_the_app_first_loads_every_module_a_page_imports_in_one_import():
    """Twenty sessions importing attnviz's modules at once each took a module's lock before its package's, and one got
    Python's "deadlock detected by _ModuleLock('attnviz.draw.describe')" (a clean-clone run of the test above).
    app.py's first project import is ui.first_imports, which loads every module a page names, while the others wait
    on that one import: checked here in a fresh Python, module by module."""
    first, names = _project_imports(ROOT / "app.py")[0]
    assert isinstance(first, ast.Import) and names == ["ui.first_imports"], ast.dump(first)
    scripts = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
    asked = {name for script in scripts for _, names in _project_imports(script) for name in names}
    code = "import sys, ui.first_imports; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert len(asked) > 50 and not asked - loaded, sorted(asked - loaded)
