"""Shared drawing: heatmap payloads and plotly charts, LaTeX, plain sentences, exports. No streamlit here."""
