"""attnviz: run `streamlit run app.py`. Navigation, the shared sidebar, and the explorer as home page."""

import streamlit as st

st.set_page_config(page_title="attnviz: attention, explained", page_icon=":material/search:", layout="wide")

PAGES = [
    st.Page("pages/explorer.py", title="Explorer", icon=":material/search:", default=True),
    st.Page("pages/step_by_step.py", title="Step by step", icon=":material/stairs:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare:"),
    st.Page("pages/scaling_lab.py", title="Scaling lab", icon=":material/straighten:"),
    st.Page("pages/masks_lab.py", title="Masks lab", icon=":material/grid_on:"),
    st.Page("pages/model_view.py", title="Model view", icon=":material/apps:"),
    st.Page("pages/induction_heads.py", title="Induction heads", icon=":material/content_copy:"),
    st.Page("pages/kv_cache.py", title="KV cache", icon=":material/memory:"),
]
navigation = st.navigation(PAGES)
# Every page draws the shared sidebar itself with `settings = ui.page_settings()` (see pages/_ui.py).
navigation.run()
