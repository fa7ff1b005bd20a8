"""The floor for an Explorer rerun: a bare Streamlit script with the Explorer's widgets and nothing computed.

Same keys, kinds, URL binding and places as the Explorer's controls (the sidebar's model, text, mask, scaling,
examples and device; the page's layer, heads, per-head colours and head to enlarge), one line that echoes them,
no model. What a rerun of it costs the server is what Streamlit itself costs for these widgets: the floor that
benchmarks/bench_class_server.py and profile_explorer.py print beside the Explorer's figures.

    streamlit run benchmarks/bare_explorer_app.py
"""

import streamlit as st

BOUND = dict(bind="query-params", persist_state="session")
MASKS = ["none", "causal", "window", "dilated", "global", "block", "padding", "random", "custom"]

st.title("Bare explorer")
side = st.sidebar
side.selectbox("Model", ["all-MiniLM-L6-v2", "tiny-llama", "toy", "toy-nopos"], key="model", **BOUND)
text = side.text_area("Text", "The animal didn't cross the street because it was too tired.", key="text",
                      height=110, max_chars=20000, **BOUND)
mask = side.selectbox("Mask", MASKS, key="mask", **BOUND)
scaled = side.toggle("Scale scores by 1/√d_k", True, key="scaled", **BOUND)
side.number_input("…or your own factor instead of 1/√d_k (0: none, the switch applies)", 0.0, 100.0, 0.0, step=0.05,
                  key="factor", **BOUND)
side.selectbox("Example sentences", ["one", "two"], index=None, key="example")
side.selectbox("Device", ["cpu"], key="device", **BOUND)
left, right = st.columns([3, 2])
with left:
    layer_at, heads_at = st.columns([1, 2])
    layer_at.selectbox("Layer", list(range(6)), key="layer", **BOUND)
    heads_at.multiselect("Heads (empty = all)", list(range(12)), default=[], key="heads", **BOUND)
    st.toggle("Per-head colours", key="per_head", **BOUND)
    st.selectbox("Head to enlarge", list(range(12)), key="focus", **BOUND)
right.markdown(f"{len(text.split())} words, mask **{mask}**, scaled **{scaled}**.")
