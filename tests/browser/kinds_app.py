"""A page with one heatmap per kind of scale (weights, signed, magnitude, mask), for the browser test of the kinds.

It registers the component straight from attnviz.components.heatmap (no page layer), as an anywidget or a
standalone HTML page would: `streamlit run tests/browser/kinds_app.py`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # attnviz, from the repository root

import numpy as np
import streamlit as st

from attnviz.components.heatmap import component_css, component_js
from attnviz.draw.heatmap_payload import heatmap_payload

TOKENS = ["[CLS]", "the", "cat", "sat", "down"]


def kind_matrices() -> dict[str, tuple[np.ndarray, str]]:
    """kind -> (a 5 × 5 matrix that fits it, its title). Seeded: the test recomputes them."""
    rng = np.random.default_rng(7)
    causal = np.tril(np.ones((5, 5), dtype=bool))
    scores = rng.normal(size=(5, 5)) * 2
    masked = np.where(causal, scores, -np.inf)
    weights = np.exp(masked - masked.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return {"weights": (weights, "A = softmax(S″)"), "signed": (masked, "S″ = S′ + M"),
            "magnitude": (np.abs(weights - np.tril(np.full((5, 5), 0.2))), "|A − uniform|"),
            "mask": (causal, "M (causal)")}


def main() -> None:
    st.set_page_config(layout="wide")
    mount = st.components.v2.component("attnviz_heatmap_kinds", js=component_js(), css=component_css())
    kinds = kind_matrices()
    for row in (("weights", "signed"), ("magnitude", "mask")):
        for col, kind in zip(st.columns(2), row, strict=True):
            matrix, title = kinds[kind]
            with col:
                st.markdown(f"**{kind}**")
                mount(key=f"kind_{kind}", width="stretch", height="content",
                      data=heatmap_payload(matrix, TOKENS, titles=[title], kind=kind, name=f"kind_{kind}",
                                           show_values=True))


if __name__ == "__main__":  # streamlit run; the test imports kind_matrices only
    main()
