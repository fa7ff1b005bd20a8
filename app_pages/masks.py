"""Masks lab: every mask on the current text, what each costs, padding in a batch, and a mask you draw."""

import streamlit as st

import ui
from attnviz.errors import AttnvizError
from ui.parts import masks_cards as parts

view = ui.open_page("Masks lab", "A mask decides which keys each query may look at: allowed pairs get M = 0, forbidden "
                    "ones M = −∞, so after the softmax a forbidden key has weight exactly 0. This page uses the model, text "
                    "and scaling set for every page, the layer and head picked on it, and applies its own masks (in every "
                    "layer) instead of the mask set for every page.", layer_heads="layer",
                    settings=("text", "model", "scale"))  # every mask is shown below: the shared one is not used

with ui.guard("The masks lab"):
    model = view.model
    head = st.selectbox("Head to show", list(range(model.n_heads)), key="masks_head", **ui.BOUND)
    run = parts.Runner(view, head)
    if model.cfg.causal:
        st.info(f"{model.name} is a decoder: its built-in causal mask applies on top of every mask here.",
                icon=":material/arrow_forward:")

    st.header("(a) Gallery: every mask on your text")
    gallery_box = st.container()
    st.header("(b) Padding: two sentences in one batch")
    padding_box = st.container()
    st.header("(c) Draw your own mask")
    editor_box = st.container()

    try:
        labels = model.encode(view.text).labels
    except AttnvizError as err:
        labels = None
        gallery_box.warning(f"{err} The gallery and the editor appear as soon as there is text.", icon=":material/edit:")
    custom_spec = None
    if labels is not None:
        with editor_box, ui.guard("The custom mask editor"):
            custom_spec = parts.custom_editor(run, labels)
        with gallery_box, ui.guard("The gallery"):
            parts.gallery(run, len(labels), custom_spec)
    with padding_box, ui.guard("The padding demo"):
        parts.padding_demo(run)
ui.mark_drawn(view)
