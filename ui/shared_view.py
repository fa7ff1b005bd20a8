"""A run that draws a view once for many browsers: a lecture step as its followers see it, drawn in a session no
browser holds and sent to every follower of the room (ui/lecture/follower_view.py). Such a run leaves out what is each
browser's own (a follower's answer box, the room's polling, a cookie) and draws what only shows: a heatmap takes no
click there, and ui/streamlit_private.shown_only draws its widgets disabled."""

from __future__ import annotations

import streamlit as st

FLAG = "_attnviz_drawn_for_followers"  # set in the session's state before its one run
DRAWN_AS = "_attnviz_drawn_for_followers_as"  # what of the room that run drew: (step, revealed), read back after it


def for_followers() -> bool:
    """Whether this run draws a view that other browsers are sent (not this session's own page)."""
    return bool(st.session_state.get(FLAG))
