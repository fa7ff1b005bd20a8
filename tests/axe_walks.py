"""Which of the accessibility statement's listed faults (docs/accessibility_faults.toml) the axe walks met, across the
test modules that walk: every page (tests/browser/test_browser.py) and every lecture plan's steps
(tests/browser/test_browser_lecture_walk.py). pytest-xdist may run the two modules in different processes, so each module, once
every one of its walks has run to its end, files what it met in the run's folder; the module that files last sees both
and concludes. A listed fault that no walk met is gone (fixed upstream, or the app no longer shows it): it comes off the
list and the statement."""

from __future__ import annotations

import json
import os
from pathlib import Path

from axe_check import known_faults

MODULES = ("pages", "plans")  # the walking modules' names in the record


def run_folder(tmp_path_factory, worker_id: str) -> Path:
    """The folder the run's test processes share: the workers' base temporary folders lie in it (without workers,
    the one process's own)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


def faults_met_nowhere(folder: Path, module: str, met: dict[str, int]) -> list[str] | None:
    """File this module's met faults (upstream issue -> elements; call once all its walks have run to their end); then
    the listed faults that no module met, or None while another module's walks have not all ended in this run."""
    record = folder / f"axe-met-{module}.json"
    partial = record.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(met), encoding="utf-8")
    partial.replace(record)  # whole, for a reader in another process
    records = [folder / f"axe-met-{name}.json" for name in MODULES]
    if not all(r.exists() for r in records):
        return None
    union = {upstream for r in records for upstream in json.loads(r.read_text(encoding="utf-8"))}
    return [f"{f.rule} at {f.where} ({f.upstream})" for f in known_faults() if f.upstream not in union]
