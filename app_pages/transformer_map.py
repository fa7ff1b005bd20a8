"""The Transformer map: the whole encoder–decoder architecture as one figure, each block a link to the page that
teaches it (attnviz/lessons/transformer_map/blocks.py says which page and in which state). The lecture's overview and its
summary."""

import streamlit as st

import ui
from attnviz.lessons.transformer_map.figure import map_html
from ui.lecture.bar import current_step, detour_query
from ui.menu import page_titles

view = ui.open_page("The Transformer map",
                    "The whole architecture of the original encoder–decoder Transformer in one figure. Click a block "
                    "to open the page that teaches it, set up to show it.", settings=())

with ui.guard("The Transformer map"):
    with ui.figure("transformer_map"):
        # markdown, not st.html: st.html's sanitiser drops SVG (every text in it is escaped by map_html)
        # a step of a lecture: each block opens its page inside the lecture (the bar, back to the map, present mode)
        lecture = current_step()
        st.markdown(map_html(page_titles(), tuple(detour_query(lecture)) if lecture else ()), unsafe_allow_html=True)
    st.caption("Left, the encoder: N identical layers, each self-attention then a feed-forward network, each sub-layer "
               "wrapped in a residual connection (the thin arrows around it) and a normalisation. Right, the decoder: "
               "its self-attention is masked (a token sees only the tokens before it), then cross-attention reads the "
               "encoder's output as keys and values. A linear layer and a softmax turn the decoder's last vector into "
               "the next token's probabilities. Decoder-only models (GPT, Llama: tiny-llama here) keep the right-hand "
               "stack without cross-attention; encoder-only models (BERT: all-MiniLM-L6-v2 here) the left-hand one.")
ui.mark_drawn(view)
