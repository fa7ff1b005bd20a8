"""attnviz: run `streamlit run app.py`. Navigation, the shared sidebar, and the explorer as home page."""

import streamlit as st
import torch

from attnviz.engine.device import server_threads
from pages._present import asked_in_link

threads = server_threads()  # the browser and the other sessions share the cores
if torch.get_num_threads() != threads:  # set once per server; later runs find it done
    torch.set_num_threads(threads)

st.set_page_config(page_title="attnviz: attention, explained", page_icon=":material/search:", layout="wide",
                   initial_sidebar_state="collapsed" if asked_in_link() else "auto")

# The menu in teaching order, in sections a lecturer can follow through an hour.
PAGES = {
    "Attention, step by step": [
        st.Page("pages/explorer.py", title="Explorer", icon=":material/search:", default=True),
        st.Page("pages/step_by_step.py", title="Step by step", icon=":material/stairs:"),
        st.Page("pages/multihead_anatomy.py", title="Multi-head anatomy", icon=":material/view_column:"),
        st.Page("pages/encoder_layer.py", title="The encoder layer", icon=":material/layers:"),
    ],
    "Why it is built so": [
        st.Page("pages/scaling_lab.py", title="Scaling lab", icon=":material/straighten:"),
        st.Page("pages/positions.py", title="Positions", icon=":material/format_list_numbered:"),
        st.Page("pages/additive_attention.py", title="Additive vs dot-product", icon=":material/functions:"),
    ],
    "Masks and cost": [
        st.Page("pages/masks_lab.py", title="Masks lab", icon=":material/grid_on:"),
        st.Page("pages/efficient_attention.py", title="Efficient attention", icon=":material/speed:"),
    ],
    "Beyond one encoder": [
        st.Page("pages/cross_attention.py", title="Cross-attention", icon=":material/translate:"),
    ],
    "Modern decoders": [
        st.Page("pages/kv_cache.py", title="KV cache", icon=":material/memory:"),
        st.Page("pages/induction_heads.py", title="Induction heads", icon=":material/content_copy:"),
    ],
    "Look closer": [
        st.Page("pages/compare.py", title="Compare", icon=":material/compare:"),
        st.Page("pages/model_view.py", title="Model view", icon=":material/apps:"),
    ],
}
navigation = st.navigation(PAGES, expanded=True)  # every page listed: no "View more" to find in class
# Every page draws the shared sidebar itself with `settings = ui.page_settings()` (see pages/_ui.py).
navigation.run()
