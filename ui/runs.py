"""Models and runs, made once and shared by every session of the server (ui.memo's one cache style).

Pages only read what comes back (a Model, a RunResult): nothing in app_pages/, ui/ or attnviz changes one.
"""

from __future__ import annotations

import os

import torch

from attnviz.engine.models.catalog import load_spec
from attnviz.engine.truth import check_against_transformers
from attnviz.errors import AttnvizError
from attnviz.lessons.step_by_step.steps import head_steps
from ui.access import server_settings
from ui.memo import SharedCache, shared


def torch_threads_from_env() -> None:
    """ATTNVIZ_TORCH_THREADS=k sets torch's CPU threads per call (default: app.py's, half the cores)."""
    threads = os.environ.get("ATTNVIZ_TORCH_THREADS", "").strip()
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))


@shared(max_entries=4)
def _load(spec: str, device: str):
    """(model, None), or (None, why not) for a model that cannot be loaded: a failure is kept too, so a part of
    the page rerun alone neither tries a download again nor shows the error twice."""
    torch_threads_from_env()
    try:
        return load_spec(spec, device, max_bytes=server_settings().max_weights_bytes), None
    except AttnvizError as err:
        return None, str(err)


def model_for(spec: str, device: str):
    """The model a spec names (raises AttnvizError when it cannot be loaded)."""
    model, error = _load(spec, device)
    if model is None:
        raise AttnvizError(error)
    return model


def model_or_error(spec: str, device: str):
    """(model, None) or (None, the reason it cannot be loaded)."""
    return _load(spec, device)


RUNS = SharedCache(max_entries=64)
TRUTH_MASK = "none"  # the check against transformers runs at the model's own mask and 1/√d_k (truth_for)


def run_key(spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False, layers: int | None = None,
            weights_only: bool = False) -> tuple:
    # repr(scale): True (1/√d_k) and the factor 1.0 are equal as Python values, and False and 0.0 too
    return spec, device, text, mask_spec, repr(scale), bool(keep), layers, bool(weights_only)


def run_for(spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False, layers: int | None = None,
            weights_only: bool = False):
    """The model's run of this text. layers: only the first `layers` layers (see Model.run), for a page that shows
    one layer; weights_only: and of the last only its attention weights. Shared, not copied (st.cache_data
    unpickled 76 MB per rerun at 512 tokens: 82 ms)."""
    key = run_key(spec, device, text, mask_spec, scale, keep, layers, weights_only)
    return RUNS.get(key, lambda: model_for(spec, device).run(text, mask=mask_spec, scale=scale, keep=keep,
                                                             layers=layers, weights_only=weights_only))


def run_through(spec: str, device: str, text: str, mask_spec: str, scale, layer: int):
    """A run that holds layer `layer`'s attention weights and every layer's below it, for a page that draws one
    layer: the whole run when it is held already or the truth check will make it anyway (at the model's own mask
    and 1/√d_k, see truth_for), else only the layers up to `layer`, the last stopping at its weights (Model.run's
    layers= and weights_only=: equal to the whole run's to the bit). A class's toggles and masks then cost a
    sixth of a run on layer 0, not a whole one; the scale swap's flipped run (ui/scale_swap.py) is this run too."""
    at_truth = mask_spec == TRUTH_MASK and scale is True  # `is`: the factor 1.0 equals True, but is not 1/√d_k
    if at_truth or held_run(spec, device, text, mask_spec, scale) is not None:
        return run_for(spec, device, text, mask_spec, scale)
    return run_for(spec, device, text, mask_spec, scale, layers=layer + 1, weights_only=True)


def held_run(spec: str, device: str, text: str, mask_spec: str, scale):
    """The whole run for these settings if it is held already, else None (nothing is computed)."""
    return RUNS.peek(run_key(spec, device, text, mask_spec, scale))


@shared(max_entries=32)
def truth_for(spec: str, device: str, text: str):
    """The check against transformers: it depends on the text only, so no toggle ever redoes it. Our side is the
    run a page at the default mask and scale already made (shared): not a second model run."""
    return check_against_transformers(model_for(spec, device), text, ours=run_for(spec, device, text, TRUTH_MASK, True))


@shared(max_entries=8)
def traced_head(spec: str, device: str, text: str, mask_spec: str, scale, layer: int, head: int):
    """One head's steps (Q, K, scores, weights) in a run that keeps every intermediate: a scale toggle back to a
    run seen before, or another cell of the same head, recomputes nothing."""
    return head_steps(model_for(spec, device), run_for(spec, device, text, mask_spec, scale, True), layer, head)
