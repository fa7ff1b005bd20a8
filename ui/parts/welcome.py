"""The home page's welcome for a newcomer: what attnviz is, in one line, and three ways in (explore a sentence with
the sidebar's controls, teach a lecture from the Lecture page with the default plan, use it from a notebook). Compact:
the explorer's heatmaps and its controls stay on the first screen. Not on a projector or in a lecture (ui/page.py)."""

from __future__ import annotations

import streamlit as st

from ui.lecture.plans import DEFAULT, plan_by_id

WHAT = ("**attnviz** shows what attention in a transformer computes, on real models, every number from its own "
        "from-scratch code. Three ways in:")
EXPLORE = ("Type a sentence in the sidebar's Text box (on a phone, » at the top left opens the sidebar) and pick the "
           "model, the mask and the scaling there: every heatmap below follows. Click a cell for its arithmetic.")
TEACH = ("The Lecture page with the default plan: a projector's view of each step, questions for the class, and a room "
         "the students follow on their phones.")
# the notebook's first cell, shorter (notebooks/attnviz_in_a_notebook.ipynb); tests/app/test_welcome.py runs it
NOTEBOOK = """import attnviz

model = attnviz.load_model()  # the bundled all-MiniLM-L6-v2, offline
res = model.run("The cat sat on the mat.", keep=True)  # keep: Q, K, V too
attnviz.show(res)  # the heatmaps in Jupyter; a click shows the arithmetic"""
NOTEBOOK_MORE = ('`pip install ".[notebook]"` in the checkout adds what `attnviz.show` needs. The example notebook, '
                 "`notebooks/attnviz_in_a_notebook.ipynb`, shows more: every layer × head at once, a transformers "
                 "model's own output, an encoder–decoder, and one HTML file that opens offline (`attnviz.save_html`).")

CSS = """<style>
/* Streamlit pulls a paragraph's box 1rem up from below (-1rem margin): centred in the row, the first way in sat lower */
.st-key-welcome [data-testid="stMarkdownContainer"], .st-key-welcome [data-testid="stMarkdownContainer"] p { margin-bottom: 0; }
/* the three ways in alike: the link's and the popover's labels in the body's type, as the first one's */
.st-key-welcome [data-testid="stPageLink"] p, .st-key-welcome [data-testid="stPopover"] button p { font-size: 1rem; }
.st-key-welcome [data-testid="stPageLink"] a { padding-left: 0; }
/* wrapped on a phone: one way in under the other, close together */
.st-key-welcome [data-testid="stHorizontalBlock"] { row-gap: 0.25rem; align-content: flex-start; }
</style>"""


def welcome() -> None:
    """One line, then the three ways in on one row (wrapped on a narrow screen); what each leads to is in its tooltip,
    and the notebook's code in its popover."""
    steps = len(plan_by_id(DEFAULT).steps)
    with st.container(key="welcome", gap="small"):
        st.html(CSS)
        st.markdown(WHAT)
        with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
            st.markdown(":material/edit: **Explore a sentence** in the sidebar", help=EXPLORE, width="content")
            st.page_link("app_pages/lecture.py", label=f"**Teach a lecture**: the default plan, {steps} steps",
                         icon=":material/co_present:", query_params={"lecture": DEFAULT}, help=TEACH)
            with st.popover("**Use it from a notebook**", icon=":material/code:", type="tertiary"):
                st.code(NOTEBOOK, language="python")
                st.caption(NOTEBOOK_MORE)
