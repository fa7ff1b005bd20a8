"""The shared settings (model, text, mask, scale, device, layer, heads, presentation mode), carried from page to page.

Streamlit's own carrying does not hold in a real browser: on a page switch (the menu, st.switch_page) the new
URL has none of the old one's parameters, and a widget bound to the URL then starts from its default, so a class
that picked tiny-llama and presentation mode found the bundled model and an open sidebar on the next page. So
the values are kept here, in plain session state, and put back into their widgets on the first run of each new
page (a value the new page's own link names wins).
"""

from __future__ import annotations

import streamlit as st

from attnviz.engine.mask_kinds import MASKS
from ui.pickers import SCALE_SWITCH
from ui.present import KEY as PRESENT

MEMORY = "_attnviz_shared_settings"
FIXED = ("model", "model_path", "text", "device", "mask", SCALE_SWITCH, "factor", "layer", "heads", PRESENT)


def shared_keys() -> tuple[str, ...]:
    """The widget keys carried from page to page: the fixed ones and every mask kind's parameters. Read at each call,
    so that a mask kind registered after this module was imported (engine/mask_kinds.register_mask_kind) is carried
    too."""
    return (*FIXED, *(p.name for kind in MASKS.values() for p in kind.parameters))


def restore_on_a_new_page(page: str) -> None:
    """On the first run of a page other than the last one, the shared settings as they were there. page: the page
    st.navigation is about to run (its URL path; the script hash of a run is not it: a first visit to "/" runs with
    another hash than the reruns after it). Called before anything reads the settings (app.py: before presentation
    mode decides the sidebar)."""
    memory = st.session_state.get(MEMORY)
    if memory is None:
        st.session_state[MEMORY] = {"page": page, "values": {}}
        return
    if memory["page"] == page:
        return
    memory["page"] = page
    for key, value in memory["values"].items():
        if key not in st.query_params:  # a link's own value wins
            st.session_state[key] = value


def current_page() -> str | None:
    """The URL path of the page this run draws ("" : the explorer), as app.py told restore_on_a_new_page."""
    memory = st.session_state.get(MEMORY)
    return None if memory is None else memory["page"]


def remember() -> None:
    """The shared settings as the widgets hold them now (after the page has drawn its pickers)."""
    memory = st.session_state.get(MEMORY)
    if memory is not None:  # made by app.py's restore_on_a_new_page, which knows the page
        memory["values"] = {key: st.session_state[key] for key in shared_keys() if key in st.session_state}
