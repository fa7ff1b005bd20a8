"""Who lectures on this server: who may start a room and upload a plan, and so read a plan's notes and expected answers
while a room of it runs (the settings' [lecture]: attnviz/server_settings.py, documented in .streamlit/attnviz.toml).

- "local" (the default): a browser on the server's own machine (the lecturer's laptop; never behind a balancer, where
  every browser arrives from the balancer's address), or one that typed the lecturers' passphrase on the Lecture page;
- "passphrase": only a browser that typed the passphrase;
- "everyone": every browser. Then a student may start a room too; the store lets a flood of such rooms and uploads
  push out only each other's, never an admitted lecturer's (attnviz/lecture/store/base.py).

A browser that typed the passphrase keeps a cookie for its browser session (a token made from the passphrase, not the
passphrase), so a reload or the projector's next page load still knows it.
"""

from __future__ import annotations

import hashlib
import hmac
import time

import streamlit as st

from ui import access
from ui.lecture.cookies import cookie, set_cookie

TYPED = "_attnviz_lecturer"  # session state: this browser typed the passphrase
COOKIE = "attnviz_lecturer"
WRONG_WAIT_S = 1.0  # a wrong passphrase waits this long before it is said: guessing one takes a while


def passphrase_token(passphrase: str) -> str:
    """What the cookie keeps: a hash of the passphrase (a cookie read off a laptop is not the passphrase itself)."""
    return hashlib.sha256(f"attnviz lecturer\0{passphrase}".encode()).hexdigest()[:40]


def typed_passphrase() -> bool:
    """This browser typed the server's passphrase (in this session, or in another page load of its browser session)."""
    passphrase = access.server_settings().lecture_passphrase
    if not passphrase:
        return False
    if st.session_state.get(TYPED):
        return True
    return hmac.compare_digest(str(cookie(COOKIE) or ""), passphrase_token(passphrase))


def admitted() -> bool:
    """An admitted lecturer: on the server's own machine (unless only the passphrase admits), or with the passphrase.
    Its rooms and uploads are never pushed out by other browsers' (the store's `admitted`)."""
    policy = access.server_settings().lecturers
    return typed_passphrase() or (policy != "passphrase" and access.browser_is_local())


def may_lecture() -> bool:
    """This browser may start a room and upload a plan."""
    return access.server_settings().lecturers == "everyone" or admitted()


def check_passphrase(key: str) -> None:
    """The passphrase box's callback: a right passphrase admits this browser (and sets its cookie on the next run)."""
    typed = str(st.session_state.get(key) or "")
    st.session_state[key] = ""  # never kept in the box
    passphrase = access.server_settings().lecture_passphrase
    if passphrase and hmac.compare_digest(typed.strip().encode(), passphrase.encode()):
        st.session_state[TYPED] = True
        st.session_state[TYPED + "_cookie"] = True
    else:
        time.sleep(WRONG_WAIT_S)
        st.session_state[TYPED + "_wrong"] = True


def who_may_lecture(where=st) -> None:
    """For a browser that may not lecture here: why, and the passphrase box where a passphrase admits."""
    settings = access.server_settings()
    if st.session_state.pop(TYPED + "_wrong", False):
        where.error("That is not this server's lecturers' passphrase.", icon=":material/key_off:")
    ways = []
    if settings.lecturers == "local" and not settings.behind_balancer:
        ways.append("open this page on the server's own computer")
    if settings.lecture_passphrase:
        ways.append("type the lecturers' passphrase below")
    how = (" To lecture: " + " or ".join(ways) + ".") if ways else (
        " No browser can lecture here until the server's keeper sets lecture.passphrase in .streamlit/attnviz.toml.")
    where.info("Rooms and uploaded plans are the lecturers' on this server: this browser follows a lecture (with its "
               "room code) and explores every page, but does not start a room, upload a plan or read a plan's notes "
               "while a room of it runs." + how, icon=":material/school:")
    if settings.lecture_passphrase:
        where.text_input("Lecturers' passphrase", type="password", key="lecturer_passphrase",
                         on_change=check_passphrase, args=("lecturer_passphrase",),
                         help="Set by the server's keeper in .streamlit/attnviz.toml ([lecture] passphrase).")


def remember_admission() -> None:
    """After the passphrase was typed: the cookie that keeps this browser admitted for its browser session."""
    if st.session_state.pop(TYPED + "_cookie", False):
        set_cookie(COOKIE, passphrase_token(access.server_settings().lecture_passphrase))
