"""Token pickers: a link names a token by position or by text, and a new text keeps the token, not the position.

A link names a position (`?fh_query=10`, not the picker's spelling "it (10)"), or a token's text: a page reads
the link once with settle_token and writes the position back with ui.page.keep_in_link after drawing its
selectbox under the same key.

When the text changes, a picker keeps the same token where the new text has it (follow_token): kept by position,
"it (10)" would become "because (10)" under a new sentence, silently comparing other tokens; and the picker's
own label would not be redrawn (Streamlit keeps a keyed selectbox's shown option when only the option names
change), so it would name a token the page no longer computes with.
"""

from __future__ import annotations

import streamlit as st

from attnviz.analysis.head_search import same_token_position, token_position
from attnviz.errors import AttnvizError
from ui.page import clamp_token_choice


def settle_token(url_key: str, labels: list[str], default: int | None, what: str) -> None:
    """The token a link names (new to this session) into the picker's state, under url_key. A token the text does
    not have is said, and the picker takes `default` (None: no token). Otherwise, after the text changed, the same
    token (follow_token). A position left over from a longer text moves to the last token, with a message."""
    raw = st.query_params.get(url_key)
    if raw is not None and raw != st.session_state.get(f"_seen_{url_key}"):
        try:
            st.session_state[url_key] = token_position(raw, labels, what)
        except AttnvizError as err:
            instead = "no token" if default is None else f"{labels[default]} ({default})"
            st.error(f"{err} Showing {instead} as the {what} token instead.", icon=":material/warning:")
            st.session_state[url_key] = default
        st.session_state[_memory(url_key)] = list(labels)  # the link named a token of this text: nothing to follow
    else:
        follow_token(url_key, labels, default, what, link_says=raw)
    stored = st.session_state.get(url_key)
    if stored is not None and not isinstance(stored, int) or (stored is None and default is not None):
        st.session_state[url_key] = default
    clamp_token_choice(url_key, len(labels), what)


def follow_token(key: str, labels: list[str], default: int | None, what: str, link_says: str | None = None) -> None:
    """Before the picker under `key` (a token position) is drawn: when the text changed since it was last drawn,
    the same token in the new text (the same occurrence where it has as many), else `default`, and a message
    naming the token that went. Always written when the text changed, even to the same position: the picker's
    option names changed, and only a written value makes Streamlit redraw the one it shows.

    link_says: the link's value for this picker; a link that names another token than the picker held is a new
    link (a lecture step), whose token is of the new text: it is not followed. A picker bound to the link
    (bind="query-params") spells its token '10: it' there."""
    memory = _memory(key)
    old = st.session_state.get(memory)
    st.session_state[memory] = list(labels)
    stored = st.session_state.get(key)
    if old is None or old == list(labels) or not isinstance(stored, int) or not 0 <= stored < len(old):
        return
    echoes = {None, str(stored), f"{stored}: {old[stored]}", f"{old[stored]} ({stored})"}
    if link_says not in echoes:
        return
    moved = same_token_position(old, stored, labels)
    if moved is None:
        moved = default
        instead = "no token" if default is None else f"“{labels[default]}” ({default})"
        st.info(f"The {what} token “{old[stored]}” ({stored}) is not in the new text: showing {instead} instead.",
                icon=":material/swap_horiz:")
    st.session_state[key] = moved


def _memory(key: str) -> str:
    return f"_token_labels_{key}"
