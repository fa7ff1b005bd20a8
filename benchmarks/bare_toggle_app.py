"""The floor for a click: a bare Streamlit app whose toggle only changes a text (benchmarks/bench_clicks.py).

?lines=N adds N one-line markdown elements that the toggle also changes: what a rerun of a page with that
many elements costs Streamlit's frontend before any heatmap or formula (the explorer's fragment sends ~50).
"""

import streamlit as st

on = st.toggle("Bare toggle", value=True)
for i in range(min(int(st.query_params.get("lines", 0)), 500)):
    st.markdown(f"line {i}: **{on}**")
st.markdown(f"The toggle is **{'on' if on else 'off'}**.")
