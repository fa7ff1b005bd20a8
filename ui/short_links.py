"""Short links: `?v=<id>` on any page stands for a whole view's query, kept in the lecture store, so that a QR code
stays small and sparse whatever text is on screen. app.py opens such a link before navigation, so the page runs
with the stored settings as if its link had named them all.

short_link(query) makes one (the QR codes of ui/lecture use it); open_short_link() opens one.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import streamlit as st

from attnviz.lecture.store import StoreError, StoreUnavailable
from ui.access import server_settings
from ui.lecture.store import lecture_store  # the one store of this process (rooms, answers, plans, short links)

KEY = "v"


def short_link(query: str) -> str:
    """"v=<id>": the short query that stands for `query` (a page's query string, without "?"). StoreError
    (StoreUnavailable, LimitReached) when the store cannot keep it: the caller then shows the long link."""
    return f"{KEY}={lecture_store().shorten(query)}"


def open_short_link() -> None:
    """With `?v=<id>` in the link: the query it stands for replaces the link's (other keys of the link are dropped,
    as a short link names a whole view). An unknown, expired or malformed id, or a store out of reach: a clear
    message, and the page opens with its defaults."""
    if KEY not in st.query_params:
        return
    raw = st.query_params.get(KEY, "")
    shown = raw[:24] + ("…" if len(raw) > 24 else "")
    try:
        query = lecture_store().expand(raw)
    except StoreUnavailable as err:
        query, problem = None, f"This short link cannot be opened now: {err}"
    except StoreError as err:
        query, problem = None, f"This short link cannot be opened: {err}"
    else:
        problem = (f"The short link “{shown}” is unknown or has expired (a short link lasts "
                   f"{server_settings().store_limits.link_days:g} days): this page opens with its defaults. Ask "
                   "for the link again, or scan the code again.")
    if query is None:
        del st.query_params[KEY]
        st.warning(problem, icon=":material/link_off:")
        return
    grouped: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        grouped.setdefault(key, []).append(value)
    grouped.pop(KEY, None)  # a stored query never opens another short link
    st.query_params.from_dict(grouped)
    # Streamlit seeds URL-bound widgets from the query a run starts with, not from one set during it: so the page
    # runs once more, now with the view's own query (this run has drawn nothing yet)
    st.rerun()
