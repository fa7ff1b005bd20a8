"""attnviz: run `streamlit run app.py`. Navigation, the shared sidebar, and the explorer as home page."""

import streamlit as st

from pages import _ui as ui

st.set_page_config(page_title="attnviz: attention, explained", page_icon="🔍", layout="wide")

PAGES = [
    st.Page("pages/explorer.py", title="Explorer", icon="🔍", default=True),
]
navigation = st.navigation(PAGES)
st.sidebar.caption("Settings below apply to every page and live in the URL: share the link to share the view.")
st.session_state["settings"] = ui.settings_from_sidebar()
navigation.run()
