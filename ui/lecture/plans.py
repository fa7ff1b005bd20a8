"""The lecture plans this server offers: the files in attnviz/assets/lectures/ (attention.toml is the default), and plans
uploaded on the Lecture page, kept in the lecture store (every process of a class server sees them) under an id
made from their content."""

from __future__ import annotations

import hashlib

from attnviz.errors import AttnvizError
from attnviz.lecture import Plan, load_plan, parse_plan
from attnviz.paths import LECTURES
from ui.lecture.store import lecture_store
from ui.memo import shared
from ui.menu import page_titles

FOLDER = LECTURES
DEFAULT = "attention"


def shipped_ids() -> list[str]:
    """The plans that ship with the app, by file name (default first)."""
    names = sorted(p.stem for p in FOLDER.glob("*.toml"))
    return sorted(names, key=lambda n: n != DEFAULT)


def plan_by_id(plan_id: str) -> Plan:
    """The plan with this id (a shipped file's name, or an upload's id), checked against this app's pages.
    AttnvizError (StoreUnavailable included) with what went wrong."""
    if plan_id in shipped_ids():
        try:
            data = (FOLDER / f"{plan_id}.toml").read_bytes()
        except OSError:
            return load_plan(FOLDER / f"{plan_id}.toml", page_titles())  # says what went wrong
    else:
        data = lecture_store().plan(plan_id)
    if data is None:
        raise AttnvizError(f'This server has no lecture plan "{plan_id}" (an uploaded plan is forgotten after a '
                           "while, or when the server restarts): upload it again on the Lecture page.")
    return checked_plan(data, tuple(page_titles().items()))


@shared(max_entries=16)
def checked_plan(data: bytes, pages: tuple[tuple[str, str], ...]) -> Plan:
    """A plan's bytes parsed and checked against these pages, once (3.6 ms for the default plan here, and every run
    of a step's page asks: the lecture bar, the predict-first gate, the notes view each second). A plan with a
    problem is not kept: its error is raised again on each call."""
    return parse_plan(data, dict(pages))


def upload_id(data: bytes) -> str:
    return "u" + hashlib.sha256(data).hexdigest()[:10]


def add_upload(data: bytes, owner: str = "", admitted: bool = True) -> str:
    """Check an uploaded plan (AttnvizError with the problem) and keep it in the store, uploaded by browser `owner`
    (an admitted lecturer or not: attnviz/lecture/store/base.py); its id for links."""
    checked_plan(data, tuple(page_titles().items()))
    plan_id = upload_id(data)
    lecture_store().put_plan(plan_id, data, owner, admitted)
    return plan_id
