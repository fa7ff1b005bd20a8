"""The pickers: one per kind of choice (model, text, mask, scale, device, layer and heads), each drawn where a
page asks (the sidebar, or Compare's side B with its key prefix) and each read back by the same function.

A picker's `draw_*` draws its widgets; its `read_*` turns the widgets' values in session state into what the
page uses (a spec, a scale). ui.state calls only the readers, so a page part rerun alone reads exactly the
values a full run would. Widgets are bound to the URL (a shared link restores the view) and persist across
pages.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from urllib.parse import quote_plus

import streamlit as st

from attnviz.engine.device import available_devices
from attnviz.engine.mask_kinds import MASKS, MaskParameter, spec_from_values
from attnviz.engine.models.catalog import FREE_FORM, FREE_FORM_DESCRIPTION, OFFERED, spec_of
from ui.access import model_choices, note_link_refusal, offered_models, server_settings

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
BOUND = dict(bind="query-params", persist_state="session")
# The longest free-text value a link carries, written as in an address. A class server's HAProxy takes request
# headers of at most 15 KB (its bufsize of 16 KB less 1 KB kept for rewrites) and a lone Streamlit server refuses
# links of 200 KB: 6,000 holds 512 tokens of English (about 3 KB) or of CJK (4.6 KB), and two such texts (Compare's
# side B) with the rest of a link stay under 15 KB.
LINK_VALUE_BYTES = 6000
SCALE_SWITCH = "scaled"  # the 1/√d_k switch's widget key (the browser finds the switch by it: heatmap_switch)


def _default(value, prefix: str) -> dict:
    """`value=` for a sidebar widget. Prefixed widgets (Compare's side B) get none: side A is copied into them
    through session state before they are drawn, and Streamlit warns when a widget gets both."""
    return {"value": value} if not prefix else {}


def bound_unless_too_long(box, key: str, what: str) -> dict:
    """The URL binding for a free-text widget while its value fits in a link (LINK_VALUE_BYTES); past that the widget
    keeps its value in the session alone, the address drops it (a link the server would refuse is never written),
    and `box` says so above the widget. A first visit binds: the link's own value arrived, so it fit."""
    value = st.session_state.get(key)
    written = len(quote_plus(str(value))) if value is not None else 0
    unbound = f"_unbound_{key}"
    if written <= LINK_VALUE_BYTES:
        if st.session_state.pop(unbound, False):  # bound again: the browser writes a bound value into the address
            st.query_params[key] = str(value)  # only when it changes, and this one changed while unbound
        return BOUND
    st.session_state[unbound] = True
    box.caption(f":material/link_off: {what} is too long for a link ({written:,} characters once written in an "
                f"address; a link carries at most {LINK_VALUE_BYTES:,}), so the address leaves it out: a link shared "
                "now opens without it.")
    return dict(persist_state="session")


def describe_choices(choices: dict[str, str]) -> str:
    return "\n".join(f"- **{name}**: {what}" for name, what in choices.items())


def model_descriptions() -> dict[str, str]:
    return {**{name: m.description for name, m in OFFERED.items()}, FREE_FORM: FREE_FORM_DESCRIPTION}


@cache
def examples() -> list[dict]:
    return json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))


# ---- model ------------------------------------------------------------------------------------------------


def draw_model(box, prefix: str = "", label: str = "Model", describe: bool = True) -> None:
    """The model picker: a name this server offers, or (where this browser may: ui.access) FREE_FORM and a hub
    name or folder typed in. describe: the choice's description under it (else in the help alone: a presenter's
    row of controls has no room)."""
    note_link_refusal(prefix)  # before the picker is drawn: drawing it drops from the URL a model it does not offer
    offered = model_choices()
    described = {name: what for name, what in model_descriptions().items() if name in offered}
    choice = box.selectbox(label, list(described), key=prefix + "model", help=describe_choices(described), **BOUND)
    if describe:
        box.caption(described[choice])
    if choice == FREE_FORM:
        typed = box.text_input("Hub name or local folder", key=prefix + "model_path",
                               placeholder="gpt2 or /path/to/model",
                               **bound_unless_too_long(box, prefix + "model_path", "This model name"),
                               help="A Hugging Face hub name needs the network; a folder needs config.json, "
                                    "a tokenizer and .safetensors weights. This server loads models of at most "
                                    f"{server_settings().max_weights_gb:g} GB of float32 weights.")
        if not typed.strip():
            box.info("Type a hub name (e.g. gpt2) or a model folder. Showing the bundled model meanwhile.")


def read_model(state, prefix: str = "") -> tuple[str, str]:
    """(the picker's choice, the spec it stands for)."""
    choice = state.get(prefix + "model") or offered_models()[0]
    return choice, spec_of(choice, str(state.get(prefix + "model_path") or ""))


# ---- text and device --------------------------------------------------------------------------------------


def _set_example() -> None:
    chosen = st.session_state.get("example")
    for example in examples():
        if example["title"] == chosen:
            st.session_state["text"] = example["text"]


def draw_examples(box) -> None:
    box.selectbox("Example sentences", [e["title"] for e in examples()], index=None, key="example",
                  placeholder="Pick an example…", on_change=_set_example)


def draw_text(box, prefix: str = "", label: str = "Text", height: int = 110) -> None:
    box.text_area(label, key=prefix + "text", height=height, max_chars=20000, **_default(DEFAULT_TEXT, prefix),
                  **bound_unless_too_long(box, prefix + "text", "This text"))


def read_text(state, prefix: str = "") -> str:
    text = state.get(prefix + "text")
    return DEFAULT_TEXT if text is None and not prefix else str(text or "")


def draw_device(box) -> None:
    box.selectbox("Device", available_devices(), key="device", help="cuda when a GPU is present, else the CPU.",
                  **BOUND)


def read_device(state) -> str:
    device = state.get("device")
    return device if device in available_devices() else available_devices()[0]


# ---- mask (driven by the engine's one registry of mask kinds) ---------------------------------------------


def _draw_parameter(box, p: MaskParameter, prefix: str) -> None:
    key = prefix + p.name
    typed = isinstance(p.default, str)  # free text (a custom mask's rows) may outgrow a link
    common = dict(key=key, help=p.help or None,
                  **(bound_unless_too_long(box, key, f"The {p.label.lower()}") if typed else BOUND))
    if typed:
        box.text_input(p.label, **_default(p.default, prefix), **common)
    elif isinstance(p.default, int) and p.high - p.low <= 20:
        box.slider(p.label, p.low, p.high, step=p.step, **_default(p.default, prefix), **common)
    elif isinstance(p.default, int):
        box.number_input(p.label, p.low, p.high, step=p.step, **_default(p.default, prefix), **common)
    else:
        box.slider(p.label, float(p.low), float(p.high), step=float(p.step), **_default(float(p.default), prefix),
                   **common)


def draw_mask(box, prefix: str = "", label: str = "Mask") -> None:
    """The mask picker and the parameters of the kind chosen."""
    labels = {name: kind.label for name, kind in MASKS.items()}
    name = box.selectbox(label, list(MASKS), key=prefix + "mask", help=describe_choices(labels), **BOUND)
    kind = MASKS[name]
    box.caption(f"{kind.label}: {kind.description}")
    for p in kind.parameters:
        _draw_parameter(box, p, prefix)


def read_mask(state, prefix: str = "") -> str:
    """The mask spec the picker holds ('window:2'); a parameter not drawn yet takes its default."""
    name = state.get(prefix + "mask") or "none"
    kind = MASKS.get(name, MASKS["none"])
    return spec_from_values({"mask": kind.name, **{p.name: state.get(prefix + p.name) for p in kind.parameters}})


# ---- scale ------------------------------------------------------------------------------------------------


def draw_scale(box, prefix: str = "", on_change=None, args=(), factor_box=None) -> None:
    """The 1/√d_k switch and a factor of one's own (in factor_box if given: a presenter's row has room for the
    switch alone). on_change(*args) runs when either changes."""
    rerun = dict(on_change=on_change, args=args) if on_change else {}
    box.toggle("Scale scores by 1/√d_k", key=prefix + SCALE_SWITCH, **_default(True, prefix), **rerun, **BOUND)
    (factor_box or box).number_input(
        "…or your own factor instead of 1/√d_k (0: none, the switch applies)", 0.0, 100.0, step=0.05,
        key=prefix + "factor", **_default(0.0, prefix),
        help="The scores are multiplied by this number instead. Leave it at 0 to use the switch (0 means: no factor of "
             "your own, not ×0).", **rerun, **BOUND)


def read_scale(state, prefix: str = "") -> bool | float:
    """The scale the two controls mean: your own factor when it is above 0, else the switch (True = 1/√d_k)."""
    try:
        factor = float(state.get(prefix + "factor") or 0.0)
    except (TypeError, ValueError):  # a link's text the factor box will refuse
        factor = 0.0
    switch = state.get(prefix + SCALE_SWITCH, True)
    if isinstance(switch, str):  # a link's spelling, before the switch is drawn (ui.page.FirstFrame)
        switch = switch.strip().lower() not in ("false", "0", "no", "off")
    return factor if factor > 0 else bool(switch)


# ---- layer and heads ----------------------------------------------------------------------------------------


def draw_layer_and_heads(n_layers: int, n_heads: int, where=None, heads: bool = True) -> None:
    """Layer and Heads pickers, in the sidebar or (where = two containers) beside what they drive.
    heads=False: the Layer picker alone (a page that shows one whole layer)."""
    layer_at, heads_at = where if where is not None else (st.sidebar, st.sidebar)
    _drop_out_of_range("layer", range(n_layers))
    layer_at.selectbox("Layer", list(range(n_layers)), index=0, key="layer", **BOUND)
    if heads:
        heads_at.multiselect("Heads (empty = all)", list(range(n_heads)), default=[], key="heads", **BOUND)


def _drop_out_of_range(key: str, options: range) -> None:
    """A layer left over from a bigger model is not an option of this one: back to the first."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = options[0]


def read_layer_and_heads(state, n_layers: int, n_heads: int) -> tuple[int, tuple[int, ...]]:
    layer = state.get("layer") or 0
    heads = state.get("heads") or []
    if isinstance(layer, str) or isinstance(heads, str):  # a link's spelling, before the pickers are drawn
        layer = int(layer) if str(layer).isdigit() else 0
        heads = [int(h) for h in str(heads).split(",") if h.strip().isdigit()] if isinstance(heads, str) else heads
    heads = sorted(h for h in heads if 0 <= h < n_heads)
    return (layer if 0 <= layer < n_layers else 0), tuple(heads or range(n_heads))
