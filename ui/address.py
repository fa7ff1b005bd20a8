"""After every run, each widget bound to the address (bind="query-params") is in it with the value it shows.

The browser writes a bound widget into its address itself, and the server then sends its own copy of the address
whenever the app writes a key by hand (ui.page.keep_in_link: a page's step, a token). That copy is the address the
browser sent with its last rerun. Two quick changes can leave it without the first one: a CI run of
tests/browser/test_browser_attention_layer.py drew the 3 × 4 grid it was given and ended on ?al_step=b, the grid
lost (a link copied then opened the 6 × 8 grid). Here the run ends by comparing each bound widget drawn in it with
the address the server holds, and writes what is missing or stale: the browser's address then says what the
controls say, whatever order the two changes arrived in.

Streamlit has no public call for this (st.query_params refuses a bound key), so this uses the one Streamlit itself
calls to restore a bound value (QueryParams.set_corrected_value): a widget's value in the address exactly as
Streamlit writes it, and only when the address differs (stored_param_matches_corrected_value). That call, and the
widgets' metadata it needs, are behind the one door to Streamlit's internals (ui/streamlit_private); on a Streamlit
that lacks them the sidebar says so, and the address is the browser's alone.
"""

from __future__ import annotations

import streamlit as st

from ui import streamlit_private


def write_bound_values_the_address_lacks() -> None:
    """Each bound widget drawn in this run whose value (other than its default) the address lacks, or holds another
    value of, is written into it (nothing is written in a run where the browser's address had them all). Then, on a
    Streamlit that lacks a piece every page uses, the sidebar says what the app does without it."""
    streamlit_private.write_bound_values_the_address_lacks()
    for feature in EVERY_PAGE:
        streamlit_private.say_missing(feature, st.sidebar)


EVERY_PAGE = ("address", "history", "component", "rerun")  # the features of ui/streamlit_private every page may use
