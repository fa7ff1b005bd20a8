"""The floor for a click: a bare Streamlit app whose toggle only changes a text (benchmarks/bench_clicks.py)."""

import streamlit as st

on = st.toggle("Bare toggle", value=True)
st.markdown(f"The toggle is **{'on' if on else 'off'}**.")
