"""The app's own modules, imported once per server process, by one session at a time (app.py's first import).

A fresh server's sessions each run app.py in a thread of their own, and each thread imported what its page needs as
it went. Python takes a lock per module, and takes a module's lock before its package's (importlib's
_find_and_load): two threads importing across attnviz's packages at once could each hold the lock the other waits
for. Python then breaks the cycle with an error: a clean-clone run of tests/deploy/test_cold_start.py (twenty
sessions at a fresh server at once) showed one session "deadlock detected by _ModuleLock('attnviz.draw.describe')".

Importing this module imports every module of attnviz (but its training scripts) and ui, in this module's body. Python
holds this module's own lock while it loads it (its package ui first), so every other session's
`import ui.first_imports`, app.py's first, waits there, holding no other import lock, until all of them are loaded:
after that, a page's imports only look them up.
"""

import importlib
from pathlib import Path

# what the app never imports: the training scripts (python -m attnviz.training...); and this module itself
LEFT_OUT = ("attnviz.training", "ui.first_imports")


def _modules_of(package_name: str) -> list[str]:
    """Every module file under the package's folder, as a dotted name (folders without __init__.py too: pkgutil
    skips those namespace packages, and attnviz.lessons.induction is one)."""
    folder = Path(importlib.import_module(package_name).__file__).parent  # the checkout's, or an installed attnviz
    names = (".".join(path.relative_to(folder.parent).with_suffix("").parts) for path in sorted(folder.rglob("*.py")))
    return [name.removesuffix(".__init__") for name in names if not name.startswith(LEFT_OUT)]


def _import_all() -> list[str]:
    """Each module of attnviz and ui imported; returns the ones that cannot be here (an optional package missing)."""
    missing = []
    for package_name in ("attnviz", "ui"):
        for name in _modules_of(package_name):
            try:
                importlib.import_module(name)
            except ImportError:  # an optional dependency (redis): the module is imported, and fails, where it is used
                missing.append(name)
    return missing


NOT_IMPORTED = _import_all()
