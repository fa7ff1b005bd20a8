"""A token picker whose link names a position: `?fh_query=10`, not the picker's spelling "it (10)".

Streamlit's own binding would write the formatted option into the address bar; a lecture plan links to
positions (or to a token's text), so a page reads the link once with settle_token and writes the position back
with ui.page.keep_in_link after drawing its selectbox under the same key.
"""

from __future__ import annotations

import streamlit as st

from ui.page import clamp_token_choice


def settle_token(url_key: str, labels: list[str], default: int | None, what: str) -> None:
    """The token a link names (new to this session) into the picker's state, under url_key. A token the text does
    not have is said, and the picker takes `default` (None: no token). A position left over from a longer text
    moves to the last token, with a message."""
    from attnviz.analysis.head_search import token_position
    from attnviz.errors import AttnvizError

    raw = st.query_params.get(url_key)
    if raw is not None and raw != st.session_state.get(f"_seen_{url_key}"):
        try:
            st.session_state[url_key] = token_position(raw, labels, what)
        except AttnvizError as err:
            instead = "no token" if default is None else f"{labels[default]} ({default})"
            st.error(f"{err} Showing {instead} as the {what} token instead.", icon=":material/warning:")
            st.session_state[url_key] = default
    stored = st.session_state.get(url_key)
    if stored is not None and not isinstance(stored, int) or (stored is None and default is not None):
        st.session_state[url_key] = default
    clamp_token_choice(url_key, len(labels), what)
