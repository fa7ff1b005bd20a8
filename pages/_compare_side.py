"""Side B's controls on the compare page: the shared sidebar's controls once more, with keys prefixed
"cmp_b_" and bound to the URL. Side B starts as a copy of side A (the sidebar); a preset or the copy
button overwrites it from A, changing the one thing the preset is about.
"""

from __future__ import annotations

import streamlit as st

from attnviz.lessons.compare.sides import (
    BUNDLED_CHOICE,
    SideConfig,
    apply_preset,
    mask_spec_from_values,
    same_settings,
    scale_from_values,
    side_from_values,
    widget_values,
)
from pages import _ui as ui

PREFIX = "cmp_b_"
SIDE_A_KEY = "_cmp_side_a"  # side A as the last run saw it, for the callbacks (they run before the page)
READY_KEY = "_cmp_b_ready"
SAME_AS_A = -1  # layer/head value meaning "follow side A"
SIDE_SHAPE = SideConfig("", "", "none", True)  # any side: its widget_values name every B widget


def key(name: str) -> str:
    return PREFIX + name


def copy_into_b(side: SideConfig) -> None:
    """Set every side-B widget to show `side`; layer and head follow A's."""
    for name, value in widget_values(side).items():
        st.session_state[key(name)] = value
    st.session_state[key("layer")] = SAME_AS_A
    st.session_state[key("head")] = SAME_AS_A


def on_preset() -> None:
    preset, side_a = st.session_state.get("cmp_preset"), st.session_state.get(SIDE_A_KEY)
    if preset and side_a is not None:
        copy_into_b(apply_preset(preset, side_a))


def on_copy() -> None:
    side_a = st.session_state.get(SIDE_A_KEY)
    if side_a is not None:
        copy_into_b(side_a)
        st.session_state["cmp_preset"] = None


def b_from_state() -> SideConfig | None:
    """Side B as its widgets held it at the start of this run (None before B was ever set)."""
    if key("text") not in st.session_state:
        return None
    return side_from_values({name: st.session_state.get(key(name)) for name in widget_values(SIDE_SHAPE)})


def remember_side_a(side_a: SideConfig, preset: str | None) -> None:
    """Keep A for the callbacks, and keep B in step with A while B is still untouched.

    First visit without B in the URL: B starts as A (+ the preset). Later, when the sidebar changes A
    and B is still exactly what the preset made of the old A, B follows; a B edited by hand stays.
    """
    previous = st.session_state.get(SIDE_A_KEY)
    st.session_state[SIDE_A_KEY] = side_a
    derive = (lambda a: apply_preset(preset, a)) if preset else (lambda a: a)
    if not st.session_state.get(READY_KEY):
        st.session_state[READY_KEY] = True
        b_in_url = any(k.startswith(PREFIX) for k in st.query_params)
        if not b_in_url and key("text") not in st.session_state:
            copy_into_b(derive(side_a))
    elif previous is not None and not same_settings(previous, side_a) and same_settings(b_from_state(),
                                                                                      derive(previous)):
        copy_into_b(derive(side_a))


def _help(choices: dict) -> str:
    return "\n".join(f"- **{name}**: {what}" for name, what in choices.items())


def _mask_controls(box) -> str:
    """The mask picker and its parameters, as in the sidebar -> a mask spec."""
    values = {"mask": box.selectbox("B: mask", list(ui.MASK_LABELS), key=key("mask"), help=_help(ui.MASK_LABELS),
                                    **ui.BOUND)}
    kind = values["mask"]
    if kind == "padding":
        values["pad"] = box.slider("[PAD] tokens appended", 1, 8, key=key("pad"), **ui.BOUND)
    elif kind == "window":
        values["window"] = box.slider("Window: keys at most this far away", 0, 8, key=key("window"), **ui.BOUND)
    elif kind == "strided":
        values["stride"] = box.slider("Stride", 2, 8, key=key("stride"), **ui.BOUND)
    elif kind == "global":
        values["gwindow"] = box.slider("Local window", 0, 8, key=key("gwindow"), **ui.BOUND)
        values["globals"] = box.text_input("Global token positions", key=key("globals"), **ui.BOUND)
    elif kind == "random":
        values["keep"] = box.slider("Keep probability", 0.05, 1.0, step=0.05, key=key("keep"), **ui.BOUND)
        values["seed"] = box.number_input("Seed", 0, 10_000, key=key("seed"), **ui.BOUND)
    elif kind == "custom":
        values["custom"] = box.text_input("Rows of 0/1, '/' between rows", key=key("custom"),
                                          placeholder="110/011/001", help="Empty = causal pattern.", **ui.BOUND)
    return mask_spec_from_values(values)


def _valid_choice(name: str, options: list[int]) -> None:
    """A layer/head left over from a bigger model is out of range for this one: follow A instead."""
    if st.session_state.get(key(name), SAME_AS_A) not in options:
        st.session_state[key(name)] = SAME_AS_A


def side_b_controls(side_a: SideConfig, device: str):
    """Draw B's widgets in a bordered box -> (side B, B's model, the spec it loaded as)."""
    box = st.container(border=True)
    box.markdown("**Side B** (starts as a copy of A; change anything here)")
    text_col, model_col = box.columns([3, 2])  # two rows of two: four columns are too narrow at 1024 px
    mask_col, scale_col = box.columns(2)
    text = text_col.text_area("B: text", key=key("text"), height=120, max_chars=20000, **ui.BOUND)
    choice = model_col.selectbox("B: model", list(ui.MODEL_CHOICES), key=key("model"), help=_help(ui.MODEL_CHOICES),
                                 **ui.BOUND)
    spec = "" if choice == BUNDLED_CHOICE else choice
    if choice == "other":
        spec = model_col.text_input("Hub name or local folder", key=key("model_path"), **ui.BOUND).strip()
    mask_spec = _mask_controls(mask_col)
    scaled = scale_col.toggle("B: scale by 1/√d_k", key=key("scaled"), **ui.BOUND)
    factor = scale_col.number_input("…or your own factor", 0.0, 100.0, step=0.05, key=key("factor"),
                                    help="Multiplies the scores instead of 1/√d_k; 0 = use the switch above.",
                                    **ui.BOUND)
    scale = scale_from_values({"scaled": scaled, "factor": factor})
    with model_col:
        model, spec = ui.load_model_or_fallback(ui.Settings(spec, text or "", mask_spec, scale, device))
    layers, heads = [SAME_AS_A, *range(model.n_layers)], [SAME_AS_A, *range(model.n_heads)]
    _valid_choice("layer", layers)
    _valid_choice("head", heads)
    pick = model_col.columns(2)
    layer = pick[0].selectbox("B: layer", layers, key=key("layer"), **ui.BOUND,
                              format_func=lambda v: f"= A ({side_a.layer})" if v == SAME_AS_A else str(v))
    head = pick[1].selectbox("B: head", heads, key=key("head"), **ui.BOUND,
                             format_func=lambda v: f"= A ({side_a.head})" if v == SAME_AS_A else str(v))
    layer = side_a.layer if layer == SAME_AS_A else layer
    head = side_a.head if head == SAME_AS_A else head
    if layer >= model.n_layers or head >= model.n_heads:
        st.warning(f"B's model has {model.n_layers} layers × {model.n_heads} heads: showing layer "
                   f"{min(layer, model.n_layers - 1)}, head {min(head, model.n_heads - 1)} for B.", icon=":material/swap_vert:")
        layer, head = min(layer, model.n_layers - 1), min(head, model.n_heads - 1)
    return SideConfig(spec, text or "", mask_spec, scale, layer, head), model, spec
