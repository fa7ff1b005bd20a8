"""The room's presenter key in the lecturer's browser, never in the projector's address.

The lecturer's links (the Lecture page's "Open step k on the projector" and "Presenter notes", the notes' QR code)
carry key=<presenter key>, so that a link copied or scanned still works. The first page load of such a link trades it:
the key goes into this browser's cookies (one per room, for its browser session) and this session's state, and leaves
the address bar, where anyone in the room could read it off the projector. The projector's later page loads (Next,
Previous, a clicker, a reload) carry no key: the page reads the room's key from the cookie, on a projector's link
(present=1) only, so that a student's view opened in the lecturer's own browser stays a student's and moves nothing.
"""

from __future__ import annotations

import streamlit as st

from ui.lecture.cookies import cookie, cookies_starting, set_cookie

PREFIX = "attnviz_key_"  # + the room's code: the cookie that holds its presenter key
HELD = "_attnviz_presenter_keys"  # session state: room code -> presenter key
LINK_KEY = "key"


def key_in_link() -> str | None:
    raw = st.query_params.get(LINK_KEY)
    return None if raw is None else str(raw)


def hold_key(code: str, key: str) -> None:
    """Keep room `code`'s presenter key in this browser (its cookie) and this session, and take it out of the address."""
    held = st.session_state.setdefault(HELD, {})
    if held.get(code) != key and cookie(PREFIX + code) != key:  # once a session, and not when the page load had it
        set_cookie(PREFIX + code, key)
    held[code] = key
    if LINK_KEY in st.query_params:
        del st.query_params[LINK_KEY]


def held_key(code: str) -> str | None:
    """Room `code`'s presenter key as this browser holds it (this session's, else the cookie's), or None."""
    return st.session_state.get(HELD, {}).get(code) or cookie(PREFIX + code)


def held_keys() -> dict[str, str]:
    """Every room's presenter key this browser holds: room code -> key."""
    return {**cookies_starting(PREFIX), **st.session_state.get(HELD, {})}
