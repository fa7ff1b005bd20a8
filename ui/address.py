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
from ui.across_pages import shared_keys
from ui.link_read import keys_read_by_the_page


def write_bound_values_the_address_lacks() -> None:
    """Each bound widget drawn in this run whose value (other than its default) the address lacks, or holds another
    value of, is written into it (nothing is written in a run where the browser's address had them all). Then, on a
    Streamlit that lacks a piece every page uses, the sidebar says what the app does without it."""
    streamlit_private.write_bound_values_the_address_lacks()
    taken = keys_read_by_the_page()
    for key, asked, shown, default in streamlit_private.refused_link_values():
        if key in taken:  # a page that read the value itself took it, or said why not (ui/link_read.py)
            continue
        # until closed: a phone's reader looks away, and the address no longer holds the value to notice
        st.toast(f"This link's {key}={asked[:60]} is not a value this page offers: {key} is {spelled(shown)} instead"
                 f"{' (its default)' if default else ''}.", icon=":material/link_off:", duration="infinite")
    for feature in EVERY_PAGE:
        streamlit_private.say_missing(feature, st.sidebar)


def spelled(value) -> str:
    """A control's value as a link spells it ("false", "1,2"); "left empty" for an empty list."""
    if isinstance(value, list):
        return ",".join(map(str, value)) if value else "left empty"
    return str(value).lower() if isinstance(value, bool) else str(value)


EVERY_PAGE = ("address", "history", "component", "rerun", "refused")  # the features of ui/streamlit_private every page may use


def shared_settings_now() -> dict[str, list[str]]:
    """The shared settings (ui/across_pages.py) as the controls drawn so far in this run hold them, in the address's
    own spelling, for a link that opens another page with them: what the address lacks of them is written first, as
    the end of the run would (a link drawn before that, just after a page switch, would miss a setting the switch
    carried in session state alone)."""
    streamlit_private.write_bound_values_the_address_lacks()
    return {key: st.query_params.get_all(key) for key in shared_keys() if key in st.query_params}

