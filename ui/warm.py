"""A server warms its default model once, in a thread of its own, from its start (ui/at_start.py).

What the Explorer's first run needs and takes seconds to make: the default model and its tokenizer, transformers'
modules and its copy of the model for the truth check (importing the model family's code alone took 2-3 CPU-s),
and the Explorer's run and truth check of the default text. Each lives in a shared cache (ui.runs), so a page that
asks for one while it is being made waits for it rather than making it again, and a class that arrives while the
server warms finds each piece done or under way.

`streamlit run app.py` starts it as the server starts, before anyone opens a page (app.py's st.App lifespan,
ui/at_start.py); a page run starts it too, for a server that did not (AppTest, a script served another way): once per
process, whichever comes first.
"""

from __future__ import annotations

import logging
import threading
import time

from attnviz.engine.device import available_devices
from attnviz.engine.models.catalog import spec_of
from attnviz.engine.truth import import_reference_code, reference_model
from ui import runs
from ui.access import offered_models
from ui.pickers import DEFAULT_TEXT

log = logging.getLogger(__name__)

_started = False
_lock = threading.Lock()


def start_warming() -> threading.Thread | None:
    """warm_default_model in a daemon thread, once per process (a later call: None, nothing started)."""
    global _started
    with _lock:
        if _started:
            return None
        _started = True
    thread = threading.Thread(target=warm_default_model, name="attnviz-warm", daemon=True)
    thread.start()
    return thread


def warm_default_model() -> None:
    """The default model, transformers' reference for it, and the Explorer's run and truth check of the default text,
    each into the cache a page reads it from (a failure is logged: the page that needs the piece says why)."""
    started = time.perf_counter()
    spec, device = spec_of(offered_models()[0]), available_devices()[0]  # what a first visit's pickers hold
    try:
        model = runs.model_for(spec, device)
        import_reference_code()
        if model.source is not None:  # a seeded toy model has no transformers copy to check against
            reference_model(model.source)
        runs.truth_for(spec, device, DEFAULT_TEXT)  # the Explorer's run of the default text, and its check
    except Exception:  # a missing model or reference: the first page shows the error where it belongs
        log.exception("attnviz: warming the default model failed")
        return
    log.info("attnviz: %s warmed in %.1f s", model.name, time.perf_counter() - started)
