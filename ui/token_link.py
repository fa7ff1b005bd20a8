"""Token pickers: a link names a token by position or by text, and a new text keeps the token, not the position.

A link names a position (`?fh_query=10`, not the picker's spelling "it (10)"), or a token's text: a page reads
the link once with settle_token, draws its selectbox under the same key, calls token_drawn at once, and writes
the position back with keep_token_in_link.

When the text changes, a picker keeps the same token where the new text has it (follow_token): kept by position,
"it (10)" would become "because (10)" under a new sentence, silently comparing other tokens; and the picker's
own label would not be redrawn (Streamlit keeps a keyed selectbox's shown option when only the option names
change), so it would name a token the page no longer computes with.

A quick second change (type a sentence, click a switch at once) makes the browser send a rerun before the page's
answer to the first reached it: that rerun carries the picker's value and the address of the OLD text ("it (10)",
fh_query=10). Read against the new text, position 10 is "because" (the race issue 30 found). So a value is always
read against the text the browser was shown: the text of the last picker drawn (token_drawn, not the last text a
run saw, since a run stopped before its picker was drawn showed nothing), an option name of an earlier text, or a
position this page wrote into the link for an earlier text.
"""

from __future__ import annotations

import re

import streamlit as st

from attnviz.analysis.head_search import same_token_position, token_position
from attnviz.errors import AttnvizError
from ui import streamlit_private
from ui.link_read import read_by_the_page
from ui.page import clamp_token_choice, keep_in_link


def settle_token(url_key: str, labels: list[str], default: int | None, what: str) -> None:
    """The token a link names (new to this session) into the picker's state, under url_key. A token the text does
    not have is said, and the picker takes `default` (None: no token). Otherwise, after the text changed, the same
    token (follow_token). A position left over from a longer text moves to the last token, with a message.

    A link is new when it names another position than this page last wrote there (keep_token_in_link), and not one
    it wrote before (_written_before): a browser that sent its rerun before the page's last write reached it still
    has that earlier address, whose position belongs to an earlier text or to an earlier pick (the quick-change
    race)."""
    raw = st.query_params.get(url_key)
    if raw is not None:
        read_by_the_page(url_key)  # taken, or said below why not
    if raw is not None and raw != st.session_state.get(f"_seen_{url_key}") and not _written_before(
            url_key, raw, labels):
        try:
            st.session_state[url_key] = token_position(raw, labels, what)
        except AttnvizError as err:
            instead = "no token" if default is None else f"{labels[default]} ({default})"
            st.error(f"{err} Showing {instead} as the {what} token instead.", icon=":material/warning:")
            st.session_state[url_key] = default
    else:
        follow_token(url_key, labels, default, what)
    stored = st.session_state.get(url_key)
    if stored is not None and not isinstance(stored, int) or (stored is None and default is not None):
        st.session_state[url_key] = default
    clamp_token_choice(url_key, len(labels), what)


def follow_token(key: str, labels: list[str], default: int | None, what: str, link_says: str | None = None) -> None:
    """Before the picker under `key` (a token position) is drawn: when the text changed since it was last drawn
    (token_drawn), the same token in the new text (the same occurrence where it has as many), else `default`, and a
    message naming the token that went. Always written when the text changed, even to the same position: the
    picker's option names changed, and only a written value makes Streamlit redraw the one it shows.

    The texts are compared with the one the picker was last DRAWN with, not the last one this function saw: the
    browser's value is a position in the text of the picker it shows, and a run stopped before its picker was drawn
    (a quick second change interrupts it) never showed the browser the new text. The browser sends a picker's value
    as the option's name; a name that is no option of this text ("it (10)" after the text changed under a picker
    already drawn) is read in the earlier text it names (_named_in_earlier_text).

    link_says: the link's value for this picker; a link that names another token than the picker held is a new
    link (a lecture step), whose token is of the new text: it is not followed. A picker bound to the link
    (bind="query-params") spells its token '10: it' there."""
    old = st.session_state.get(_memory(key))
    stored = st.session_state.get(key)
    named = isinstance(stored, str)
    if named:  # the browser's option name, from an earlier text's picker
        earlier = _named_in_earlier_text(key, stored)
        if earlier is None:
            return
        old, stored = earlier
    if old is None or not isinstance(stored, int) or not 0 <= stored < len(old):
        return
    if old == list(labels):
        if named:
            st.session_state[key] = stored
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


def token_drawn(key: str, labels: list[str]) -> None:
    """Right after the picker under `key` is drawn, before anything else is drawn (every element drawn is a point
    where a newer rerun may stop this one): the text its options name, which the browser now shows (and
    the few texts before it, in which a late value from the browser is read)."""
    st.session_state[_memory(key)] = list(labels)
    earlier = [past for past in st.session_state.get(_past(key), []) if past != list(labels)]
    st.session_state[_past(key)] = [list(labels), *earlier[:KEPT_TEXTS - 1]]


def keep_token_in_link(url_key: str, value: int | None, labels: list[str]) -> None:
    """After a picker kept in the link by position (settle_token) is drawn: its position in the address bar
    (ui.page.keep_in_link), and which text each position written was of, so that an address the browser had before
    the last write is known as an earlier text's."""
    if value is not None and st.session_state.get(f"_seen_{url_key}") != str(value):
        written = [w for w in st.session_state.get(_written(url_key), []) if w[0] != str(value)]
        st.session_state[_written(url_key)] = [(str(value), list(labels)), *written[:KEPT_TEXTS - 1]]
    keep_in_link(url_key, value)


KEPT_TEXTS = 4  # a browser is at most a few runs behind the server


def _named_in_earlier_text(key: str, name: str) -> tuple[list[str], int] | None:
    """(an earlier text, a position in it) that the option name (as a picker spells it: 'it (10)' or '10: it')
    names, the latest such text first; None if none does."""
    spelled = re.fullmatch(r"(?:(\d+): .*|.* \((\d+)\))", name, flags=re.DOTALL)
    if not spelled:
        return None
    at = int(next(g for g in spelled.groups() if g is not None))
    for past in st.session_state.get(_past(key), []):
        if at < len(past) and name in (f"{at}: {past[at]}", f"{past[at]} ({at})"):
            return past, at
    return None


def _written_before(url_key: str, raw: str, labels: list[str]) -> bool:
    """Whether `raw` is an address this page wrote for this picker before its last write, which a rerun sent before
    that write reached the browser still carries: one written under another text than `labels`, or, on a run that is
    not the browser's Back or Forward, under this text (a quick second pick: the query, then at once the key). Back
    and Forward reopen an earlier address on purpose: there a position of this text is what the entry asks for."""
    written = st.session_state.get(_written(url_key), [])
    if any(value == raw and text != list(labels) for value, text in written):
        return True
    went_back = streamlit_private.is_history_navigation()
    return not went_back and any(value == raw for value, _ in written)


def _memory(key: str) -> str:
    return f"_token_labels_{key}"


def _past(key: str) -> str:
    return f"_token_texts_{key}"


def _written(key: str) -> str:
    return f"_token_written_{key}"
