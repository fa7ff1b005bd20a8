"""Side B's controls on the compare page: the shared sidebar's controls once more, with keys prefixed
"cmp_b_" and bound to the URL. Side B starts as a copy of side A (the sidebar); a preset or the copy
button overwrites it from A, changing the one thing the preset is about.
"""

from __future__ import annotations

import streamlit as st

import ui
from attnviz.lessons.compare.sides import SideConfig, apply_preset, same_settings, side_from_values, widget_values
from ui import pickers

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


def _valid_choice(name: str, options: list[int]) -> None:
    """A layer/head left over from a bigger model is out of range for this one: follow A instead."""
    if st.session_state.get(key(name), SAME_AS_A) not in options:
        st.session_state[key(name)] = SAME_AS_A


def side_b_controls(side_a: SideConfig):
    """Draw B's widgets in a bordered box (the sidebar's own pickers, with B's keys) -> (side B, B's view state)."""
    box = st.container(border=True)
    box.markdown("**Side B** (starts as a copy of A; change anything here)")
    text_col, model_col = box.columns([3, 2])  # two rows of two: four columns are too narrow at 1024 px
    mask_col, scale_col = box.columns(2)
    pickers.draw_text(text_col, PREFIX, label="B: text", height=120)
    pickers.draw_model(model_col, PREFIX, label="B: model")
    pickers.draw_mask(mask_col, PREFIX, label="B: mask")
    pickers.draw_scale(scale_col, PREFIX)
    view_b = ui.view_state(prefix=PREFIX)
    with model_col:
        ui.page.tell(view_b)
    model = view_b.model
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
    return SideConfig(view_b.model_spec, view_b.text, view_b.mask_choice, view_b.scale, layer, head), view_b
