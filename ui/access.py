"""What this browser may ask of this server: the models it is offered, and whether it may name another.

The rules come from the server's settings (attnviz.server_settings, read once per process); the one fact
about the browser is whether it sits on the server's own machine. Every picker asks here (the sidebar and
Compare's side B alike), and the view state asks again before loading, so a crafted link cannot pass what
a picker would not show.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

import streamlit as st

from attnviz.engine.models.catalog import FREE_FORM, OFFERED
from attnviz.lecture.links import is_loopback_address
from attnviz.server_settings import ServerSettings, read_settings, settings_path
from ui.link_read import read_by_the_page

log = logging.getLogger("attnviz.app")
ROOT = Path(__file__).resolve().parent.parent  # app.py's folder: .streamlit/attnviz.toml is there


@cache
def server_settings() -> ServerSettings:
    """This server's settings (read once: a lecture's rules do not change under a class)."""
    settings = read_settings(settings_path(ROOT), tuple(OFFERED))
    for problem in settings.problems:
        log.warning("attnviz settings: %s", problem)
    return settings


def client_address() -> str | None:
    """The address this session's browser connected from; None for a loopback connection (Streamlit's way)."""
    return st.context.ip_address


def browser_is_local() -> bool:
    """Whether this session's browser is on the server's own machine: its address is loopback (None is Streamlit's
    word for 127.0.0.1 and ::1; plain `streamlit run app.py` listens on IPv4 and IPv6, and a browser opened at
    http://127.0.0.1:8501 arrives as ::ffff:127.0.0.1). Behind a balancer every connection comes from the balancer's
    loopback address, so there nobody can be told local."""
    address = client_address()
    return not server_settings().behind_balancer and (address is None or is_loopback_address(address))


def free_form_allowed() -> bool:
    """Whether this browser may type a hub name or a folder (settings: models.free_form)."""
    policy = server_settings().free_form
    return policy == "everyone" or (policy == "local" and browser_is_local())


def offered_models() -> list[str]:
    """The short names the pickers offer on this server, in the catalogue's order."""
    offered = server_settings().offered
    return [name for name in OFFERED if offered is None or name in offered]


def model_choices() -> list[str]:
    """The model picker's options for this browser: the offered models, and FREE_FORM where it may."""
    return offered_models() + ([FREE_FORM] if free_form_allowed() else [])


def model_refusal(choice: str) -> str | None:
    """Why this browser may not load this picker choice (None: it may). One message for every refused choice,
    whatever it names: it never tells whether a folder exists, or anything else about the server."""
    if choice in model_choices():
        return None
    if free_form_allowed():  # this browser may: the choice was a link's, not the picker's
        others = "are named under 'other' in the Model picker, not in a link"
    elif server_settings().free_form == "local" and server_settings().behind_balancer:
        others = "are turned off on this class server"
    else:
        others = {"nobody": "are turned off on this server",
                  "local": "can be opened only from a browser on the server's own machine"}[server_settings().free_form]
    return (f"This server offers these models: {', '.join(offered_models())}. Other models (a hub name or a "
            f"folder) {others}.")


LINK_REFUSAL = "_attnviz_link_refusal"  # + a picker's prefix: the refusal for the link this run opened


def note_link_refusal(prefix: str = "") -> None:
    """Before a model picker is drawn: keep the refusal for a link that names a model this browser is not offered
    (Streamlit drops such a value from a bound picker's URL without a word, when the picker is drawn); the view
    state then tells the student why (ui.state.view_state reads it back with link_refusal)."""
    asked = st.query_params.get(prefix + "model")
    st.session_state[LINK_REFUSAL + prefix] = model_refusal(asked) if asked else None
    if asked:
        read_by_the_page(prefix + "model")  # its refusal is this one: ui/address.py adds none


def link_refusal(prefix: str = "") -> str | None:
    return st.session_state.get(LINK_REFUSAL + prefix)


def settings_problems() -> tuple[str, ...]:
    return server_settings().problems
