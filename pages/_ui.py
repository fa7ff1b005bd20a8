"""Shared Streamlit pieces: the sidebar every page uses, cached model runs, and the error guard.

Widgets here are bound to the URL (bind="query-params"), so a link a teacher shares restores the
view; persist_state="session" keeps them across pages. No math lives here: it is in attnviz.
"""

from __future__ import annotations

import json
import logging
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from pages._memo import SharedCache

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
# Bound selectboxes put the option's text in the URL, so options are short names, described in help.
MODEL_CHOICES = {
    "all-MiniLM-L6-v2": "the bundled BERT model (6 layers × 12 heads), offline",
    "toy": "a tiny seeded model (2 layers × 2 heads, d_model 8) whose numbers fit in cells",
    "tiny-llama": "attnviz-tiny-llama: a 2-layer causal Llama (RoPE, grouped-query attention) that attnviz trained "
                  "on repeated words, offline",
    "toy-nopos": "the same toy with its position embeddings removed: attention then sees a set of words",
    "other": "a Hugging Face hub name (needs the network) or a local model folder",
}
MASK_LABELS = {
    "none": "none (bidirectional)",
    "causal": "causal (no peeking ahead)",
    "padding": "padding ([PAD] tokens appended)",
    "window": "sliding window (local)",
    "strided": "strided / dilated (every s-th key, no local window)",
    "global": "global + local (Longformer)",
    "random": "random (Bernoulli per pair, seeded)",
    "custom": "custom 0/1 matrix",
}


def _choices_help(choices: dict) -> str:
    return "\n".join(f"- **{k}**: {v}" for k, v in choices.items())
BOUND = dict(bind="query-params", persist_state="session")
log = logging.getLogger("attnviz.app")


@dataclass(frozen=True)
class Settings:
    model_spec: str  # what load_model gets
    text: str
    mask_spec: str
    scale: bool | float  # True = 1/sqrt(d_k), False = 1, float = that factor
    device: str


def examples() -> list[dict]:
    return json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))


# ---- caching ----------------------------------------------------------------------------------


def torch_threads_from_env() -> None:
    """ATTNVIZ_TORCH_THREADS=k sets torch's CPU threads per call (default: torch's own, one per core).

    Measured on the shared 2-core machine: one 14-token run 1.24 s with 2 threads vs 0.06 s with 1 (under
    heavy outside load), yet benchmarks/bench_class.py showed no difference (30 sessions: p95 12.4 s with 1
    thread, 13.2 s and 13.4 s with the default), so the default is left alone."""
    import os

    threads = os.environ.get("ATTNVIZ_TORCH_THREADS", "").strip()
    if threads.isdigit() and int(threads) > 0:
        import torch

        torch.set_num_threads(int(threads))


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_model(spec: str, device: str):
    import attnviz

    torch_threads_from_env()
    if spec == "toy-nopos":  # the sidebar's name for the toy without positions (the permutation demo)
        return attnviz.load_model("toy", device=device, positions=False)
    return attnviz.load_model(spec or None, device=device)


def cached_run(spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False, layers: int | None = None,
               weights_only: bool = False):
    """The model's run of this text, cached. layers: only the first `layers` layers (see
    Model.run), for a page that shows one layer; weights_only: and of the last only its attention weights.

    Shared by every rerun and session that asks for it, not copied (st.cache_data unpickled 76 MB per rerun
    at 512 tokens: 82 ms). Pages only read a RunResult; nothing in pages/ or attnviz changes one."""
    key = run_key(spec, device, text, mask_spec, scale, keep, layers, weights_only)
    return RUNS.get(key, lambda: cached_model(spec, device).run(text, mask=mask_spec, scale=scale, keep=keep,
                                                                layers=layers, weights_only=weights_only))


RUNS = SharedCache(max_entries=64)


def run_key(spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False, layers: int | None = None,
            weights_only: bool = False) -> tuple:
    # repr(scale): True (1/√d_k) and the factor 1.0 are equal as Python values, and False and 0.0 too
    return spec, device, text, mask_spec, repr(scale), bool(keep), layers, bool(weights_only)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_truth(spec: str, device: str, text: str):
    from attnviz.engine.truth import check_against_transformers

    # our side is the run a page at the default mask and scale already made (shared): not a second model run
    return check_against_transformers(cached_model(spec, device), text, ours=cached_run(spec, device, text, "none", True))


def truth_badge(badge, check, matched) -> None:
    """The live check against transformers, shown in `badge` (an st.empty above the page's heatmaps).

    check() -> an attnviz.engine.truth result; matched(truth) -> the sentence for a match, saying what was compared.
    No reference, a difference and a check that could not run read the same on every page.
    """
    with st.spinner("Checking against transformers…"):
        try:
            truth = check()
            if truth.max_abs_diff is None:
                badge.info(f"Truth check: no transformers reference, since {truth.reason}.", icon=":material/info:")
            elif truth.matches:
                badge.success(matched(truth))
            else:
                badge.error(f"✗ differs from transformers: max |Δ| = {truth.max_abs_diff:.1e} (tolerance 1e-5).")
        except Exception as err:
            badge.warning(f"Truth check unavailable: {err}")


# ---- errors -----------------------------------------------------------------------------------


@contextmanager
def guard(what: str = "This part of the page"):
    """Show a user's mistake as st.error and an unexpected failure as a short message, never a traceback."""
    from attnviz.errors import AttnvizError

    try:
        yield
    except AttnvizError as err:
        st.error(str(err), icon=":material/warning:")
    except Exception as err:
        log.error("%s failed:\n%s", what, traceback.format_exc())
        st.error(f"{what} could not be drawn: {type(err).__name__}: {err}", icon=":material/warning:")


# ---- the shared sidebar -----------------------------------------------------------------------


def _set_example():
    choice = st.session_state.get("example")
    for ex in examples():
        if ex["title"] == choice:
            st.session_state["text"] = ex["text"]


def model_and_text_controls() -> tuple[str, str, str]:
    """Model choice, text and device: the part of the sidebar that does not depend on the model."""
    from attnviz.engine.device import available_devices

    sb = st.sidebar
    choice = sb.selectbox("Model", list(MODEL_CHOICES), key="model", help=_choices_help(MODEL_CHOICES), **BOUND)
    sb.caption(MODEL_CHOICES[choice])
    spec = {"all-MiniLM-L6-v2": "", "tiny-llama": "attnviz-tiny-llama"}.get(choice, choice)
    if choice == "other":
        spec = sb.text_input("Hub name or local folder", key="model_path", placeholder="gpt2 or /path/to/model",
                             help="A Hugging Face hub name needs the network; a folder needs config.json, "
                                  "a tokenizer and .safetensors weights.", **BOUND).strip()
        if not spec:
            sb.info("Type a hub name (e.g. gpt2) or a model folder. Showing the bundled model meanwhile.")
    sb.selectbox("Example sentences", [e["title"] for e in examples()], index=None, key="example",
                 placeholder="Pick an example…", on_change=_set_example)
    text = sb.text_area("Text", value=DEFAULT_TEXT, key="text", height=110, max_chars=20000, **BOUND)
    devices = available_devices()
    device = sb.selectbox("Device", devices, key="device", help="cuda when a GPU is present, else the CPU.", **BOUND)
    return spec, text or "", device


def mask_controls() -> str:
    """The mask picker and its parameters -> a mask spec such as 'window:2' (one mapping, shared with Compare)."""
    from attnviz.lessons.compare.sides import MASK_DEFAULTS as D
    from attnviz.lessons.compare.sides import mask_spec_from_values

    sb = st.sidebar
    kind = sb.selectbox("Mask", list(MASK_LABELS), key="mask", help=_choices_help(MASK_LABELS), **BOUND)
    sb.caption(MASK_LABELS[kind])
    values = {"mask": kind}
    if kind == "padding":
        values["pad"] = sb.slider("[PAD] tokens appended", 1, 8, D["pad"], key="pad", **BOUND)
    elif kind == "window":
        values["window"] = sb.slider("Window: keys at most this far away", 0, 8, D["window"], key="window", **BOUND)
    elif kind == "strided":
        values["stride"] = sb.slider("Stride", 2, 8, D["stride"], key="stride", **BOUND)
    elif kind == "global":
        values["gwindow"] = sb.slider("Local window", 0, 8, D["gwindow"], key="gwindow", **BOUND)
        values["globals"] = sb.text_input("Global token positions (comma separated)", D["globals"], key="globals",
                                          **BOUND)
    elif kind == "random":
        values["keep"] = sb.slider("Keep probability", 0.05, 1.0, D["keep"], 0.05, key="keep", **BOUND)
        values["seed"] = sb.number_input("Seed", 0, 10_000, D["seed"], key="seed", **BOUND)
    elif kind == "custom":
        values["custom"] = sb.text_input(
            "Rows of 0/1, '/' between rows", D["custom"], key="custom", placeholder="110/011/001",
            help="One row per query token, one digit per key token. Empty = causal pattern for the current text.",
            **BOUND)
    return mask_spec_from_values(values)


SCALE_SWITCH = "scaled"  # the 1/√d_k switch's widget key (the browser finds the switch by it: heatmap_switch)


def scale_from(scaled, factor) -> bool | float:
    """The scale the two controls mean: your own factor when it is above 0, else the switch (True = 1/√d_k)."""
    return float(factor) if factor and factor > 0 else bool(scaled)


def live_scale(settings: Settings) -> bool | float:
    """The scale the sidebar holds now. A fragment rerun (see page_settings' scale_reruns) gets the Settings of
    the last full run, so it reads the scale from the widgets' state instead."""
    if SCALE_SWITCH not in st.session_state:
        return settings.scale
    return scale_from(st.session_state.get(SCALE_SWITCH, True), st.session_state.get("factor", 0.0))


# Up to this many tokens a page may send its heatmaps with the 1/√d_k switch flipped too, for the browser to swap
# in at once (flipped_scale_state). Longer, the second run and the doubled bytes (64 tokens: 98 kB more for 12
# heads; 512: 6 MB) cost more than the round trip they hide, and the switch waits for the rerun as before.
SWAP_MAX_TOKENS = 64


def flipped_scale_state(spec: str, settings: Settings, mask_spec: str, n_tokens: int, layer: int):
    """The run with the 1/√d_k switch flipped (same text and mask) as far as this layer's attention weights, as
    pages/_heatmap's OtherState; None where the switch decides nothing (a factor of your own is set) or the text
    is too long (see SWAP_MAX_TOKENS). Only that far: a class's every new sentence pays for it, most of them on
    layer 0, where it costs a fraction of a whole run; the rerun after a flip runs the whole model as before."""
    from pages._heatmap import OtherState

    scale = live_scale(settings)
    if not isinstance(scale, bool) or n_tokens > SWAP_MAX_TOKENS:
        return None
    # after a flip, the state flipped back to is usually held whole already: no need for a partial run of it
    flipped = (RUNS.peek(run_key(spec, settings.device, settings.text, mask_spec, not scale))
               or cached_run(spec, settings.device, settings.text, mask_spec, not scale, False, layer + 1, True))
    return OtherState(SCALE_SWITCH, scale, flipped)


def rerun_only(fragment_keys: str | list[str]) -> None:
    """From a widget callback: rerun these keyed fragments instead of the whole page. A fragment the last run
    never drew (its page stopped early) is unknown to Streamlit: then the whole page reruns, as without a callback."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.rerun(fragment_keys)
    except StreamlitAPIException:
        return


def scale_controls(scale_reruns: str | list[str] | None = None) -> bool | float:
    sb = st.sidebar
    # a page that draws everything the scale changes inside keyed fragments names them: a toggle then reruns
    # those alone, not the sidebar, the model load and the rest of the page
    rerun = dict(on_change=rerun_only, args=(scale_reruns,)) if scale_reruns else {}
    scaled = sb.toggle("Scale scores by 1/√d_k", value=True, key=SCALE_SWITCH, **rerun, **BOUND)
    factor = sb.number_input("…or use your own factor instead of 1/√d_k", 0.0, 100.0, 0.0, 0.05, key="factor",
                             help="The scores are multiplied by this number instead. Leave it at 0 to use the "
                                  "switch above (0 means: no factor of your own, not ×0).", **rerun, **BOUND)
    return scale_from(scaled, factor)


def seed_from_url(key: str, parse) -> dict:
    """Keyword arguments for a bound widget whose URL spelling Streamlit may not recognise.

    On a first visit, when the link's value for `key` parses (parse(raw) -> a value, or None) the widget's
    state is seeded with it, and no `value=` must be passed (Streamlit warns when both are given).
    Returns {} then, else {"value": None} meaning: pass your own default.
    """
    raw = st.query_params.get(key)
    if key not in st.session_state and raw is not None:
        value = parse(raw)
        if value is not None:
            st.session_state[key] = value
            return {}
    return {"value": None}


def leave_legacy_page_discovery() -> None:
    """Rerun through app.py's st.navigation if this page was started by pages/ auto-discovery.

    Until some run has called st.navigation, a fresh server treats pages/ the old way: a shared
    link such as /model_view then runs that file alone, with a menu of every file in pages/
    (helpers included) and without app.py's page config. Streamlit leaves that mode only when
    st.navigation runs, so we clear its flag and rerun: the rerun executes app.py, whose
    navigation opens the page the link named. It happens at most once per server process.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_settings(scale_reruns: str | list[str] | None = None) -> Settings:
    """Draw the shared sidebar and return its settings: the first call of every page.

    scale_reruns: the key(s) of the page's @st.fragment(key=...) that draw everything the scale changes and
    read it with live_scale(); the scale controls then rerun those fragments only.

    Each page draws it (not app.py) because Streamlit's AppTest loses widgets drawn by the
    entrypoint when it reruns under st.navigation; persist_state keeps values across pages.
    """
    from pages._present import fit_wide_math, presentation_toggle

    leave_legacy_page_discovery()
    presentation_toggle()
    fit_wide_math()
    st.sidebar.caption("These settings apply to every page and live in the URL: share the link to share the view.")
    spec, text, device = model_and_text_controls()
    mask_spec = mask_controls()
    scale = scale_controls(scale_reruns)
    settings = Settings(model_spec=spec, text=text, mask_spec=mask_spec, scale=scale, device=device)
    st.session_state["settings"] = settings
    return settings


def load_model_or_fallback(settings: Settings):
    """The chosen model, or, when it cannot be loaded, an error and the bundled model instead."""
    from attnviz.errors import AttnvizError

    try:
        with st.spinner(f"Loading {settings.model_spec or 'the bundled model'} (first time only)…"):
            return cached_model(settings.model_spec, settings.device), settings.model_spec
    except AttnvizError as err:
        st.error(f"{err} Showing the bundled all-MiniLM-L6-v2 instead.", icon=":material/warning:")
        return cached_model("", settings.device), ""


def custom_mask_default(spec: str, n: int) -> str:
    """An empty custom mask means 'start from the causal pattern' for the current number of tokens."""
    if spec != "custom:":
        return spec
    return "custom:" + "/".join("1" * (i + 1) + "0" * (n - i - 1) for i in range(n))


def layer_and_heads(n_layers: int, n_heads: int, where=None) -> tuple[int, list[int]]:
    """Layer and Heads pickers, in the sidebar or (where = two containers) beside what they drive."""
    layer_at, heads_at = where if where is not None else (st.sidebar, st.sidebar)
    layer = layer_at.selectbox("Layer", list(range(n_layers)), index=0, key="layer", **BOUND)
    heads = heads_at.multiselect("Heads (empty = all)", list(range(n_heads)), default=[], key="heads", **BOUND)
    return int(layer or 0), sorted(heads) or list(range(n_heads))


def checked_run(model, spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False, who: str = ""):
    """-> (RunResult, the mask spec really used). Raises AttnvizError for a text with nothing to attend to.

    An empty 'custom:' means the causal pattern for this many tokens; a mask that does not fit the
    text is reported and replaced by no mask, so the page still shows something true.
    """
    from attnviz.engine.masks import padding_count, parse_mask
    from attnviz.errors import AttnvizError

    n = len(model.encode(text).ids) + padding_count(mask_spec)
    mask_spec = custom_mask_default(mask_spec, n)
    try:
        parse_mask(mask_spec, n)
    except AttnvizError as err:
        st.error(f"{who}Mask: {err} Showing no mask instead.", icon=":material/warning:")
        mask_spec = "none"
    with st.spinner("Running the attention…"):
        res = cached_run(spec, device, text, mask_spec, scale, keep)
    for note in res.notes:
        st.info(f"{who}{note}", icon=":material/content_cut:")
    return res, mask_spec


def page_run(model, spec: str, settings: Settings, what: str, keep: bool = False, scale=None):
    """The sidebar's text, mask and scale through the model for a page -> (RunResult, mask spec used).

    With no usable text the page shows a warning ("{what} as soon as there is text") and stops.
    """
    from attnviz.errors import AttnvizError

    try:
        model.encode(settings.text)
    except AttnvizError as err:
        st.warning(f"{err} {what} as soon as there is text.", icon=":material/edit:")
        st.stop()
    return checked_run(model, spec, settings.device, settings.text, settings.mask_spec,
                       settings.scale if scale is None else scale, keep)


def page_link(page: str, label: str, icon: str, query_params: dict) -> None:
    """st.page_link, or the same link as markdown where Streamlit cannot look the page up: AppTest runs a
    fragment rerun without the pages app.py's st.navigation registered (a browser session keeps them)."""
    from urllib.parse import urlencode

    from streamlit.errors import StreamlitPageNotFoundError

    try:
        st.page_link(page, label=label, icon=icon, query_params=query_params)
    except StreamlitPageNotFoundError:
        st.markdown(f"[{label}]({Path(page).stem}?{urlencode(query_params)})")


def clamp_token_choice(key: str, n: int, what: str = "") -> None:
    """A token index left over from a longer text is moved to the last token, and the user is told."""
    stored = st.session_state.get(key)
    if isinstance(stored, int) and not 0 <= stored < n:
        st.session_state[key] = n - 1
        name = f"The {what} token" if what else "Token"
        st.warning(f"{name} {stored} does not exist in this text of {n} tokens (0 to {n - 1}): showing the last "
                   f"token, {n - 1}, instead.", icon=":material/undo:")
