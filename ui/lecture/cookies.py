"""This browser's cookies for the lecture: read from the page load's request (st.context.cookies), written by a script
in the page (a session cookie: no expiry, gone when the browser closes; path /, sent on every page load of the app).

A cookie written in this page reaches the server with the next page load (a new Streamlit session), not this session:
what it holds is also kept in this session's state by whoever writes it.
"""

from __future__ import annotations

import json
import re

import streamlit as st

NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
VALUE = re.compile(r"[A-Za-z0-9_-]{1,128}")


def cookie(name: str) -> str | None:
    """The cookie `name` this page load arrived with, or None."""
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) and value else None


def cookies_starting(prefix: str) -> dict[str, str]:
    """Every cookie of this page load whose name starts with `prefix` -> {the rest of its name: its value}."""
    return {name[len(prefix):]: value for name, value in st.context.cookies.items()
            if isinstance(name, str) and name.startswith(prefix) and isinstance(value, str) and value}


def set_cookie(name: str, value: str) -> None:
    """Write a session cookie in this browser (name and value: letters, digits, _ and -)."""
    if not (NAME.fullmatch(name) and VALUE.fullmatch(value)):
        raise ValueError(f"not a cookie this app writes: {name!r}")
    text = json.dumps(f"{name}={value}; path=/; SameSite=Strict")
    # marked as a script alone (ui/accessibility.py): on a projector's first load its empty element took a row's gap
    # above the lecture bar, and the question below ran past the screen's bottom
    st.html(f'<span class="attnviz-script" hidden></span><script>(window.parent || window).document.cookie = {text};'
            "</script>", unsafe_allow_javascript=True)
