"""ui/warm.py: a server's first page run starts warming the default model once; the warming leaves in the shared caches
what the Explorer's first run reads (the model, the run of the default text, its truth check)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

from ui import runs, warm
from ui.pickers import DEFAULT_TEXT

SPEC, DEVICE = "", "cpu"  # the first model offered (the bundled all-MiniLM-L6-v2), on the CPU


def test_the_warming_leaves_the_explorers_first_run_and_its_check_made():
    runs.RUNS._values.clear()
    runs.truth_for.cache._values.clear()
    warm.warm_default_model()
    assert runs.held_run(SPEC, DEVICE, DEFAULT_TEXT, runs.TRUTH_MASK, True) is not None
    made = runs.truth_for.cache.peek(tuple((type(a), a) for a in (SPEC, DEVICE, DEFAULT_TEXT)))  # ui.memo's keys
    assert made is not None and made.matches


def test_warming_starts_once_per_process(monkeypatch):
    started = []
    monkeypatch.setattr(warm, "_started", False)
    monkeypatch.setattr(warm, "warm_default_model", lambda: started.append(1))
    first, second = warm.start_warming(), warm.start_warming()
    first.join(10)
    assert second is None and started == [1]
