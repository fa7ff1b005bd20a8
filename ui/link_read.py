"""The keys of the link a page read itself this run, in a spelling Streamlit's binding does not know (a token by its
position or its text, a step's letter) or with its own message when it cannot take it (a model the picker does not
offer): ui/address.py says nothing more of them when Streamlit's binding dropped their value."""

from __future__ import annotations

import streamlit as st

READ_BY_THE_PAGE = "_attnviz_link_keys_read_by_the_page"  # session state: this run's keys a page read itself


def read_by_the_page(key: str) -> None:
    """This run's page took `key`'s value from the link itself ("fh_query=10" for the picker's "it (10)"), or says
    itself why not."""
    st.session_state.setdefault(READ_BY_THE_PAGE, set()).add(key)


def keys_read_by_the_page() -> set[str]:
    """This run's keys a page read itself, forgotten for the next run."""
    return st.session_state.pop(READ_BY_THE_PAGE, set())
