"""The lecture plans this server offers: the files in attnviz/assets/lectures/ (attention.toml is the default), and plans
uploaded on the Lecture page, kept in this process's memory under an id made from their content."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from attnviz.errors import AttnvizError
from attnviz.lecture import Plan, load_plan, parse_plan
from attnviz.paths import LECTURES
from ui.memo import shared
from ui.menu import page_titles

FOLDER = LECTURES
DEFAULT = "attention"
MAX_UPLOADED = 32  # uploads kept per process; the oldest goes first
UPLOADED: OrderedDict[str, bytes] = OrderedDict()
LOCK = threading.Lock()


def shipped_ids() -> list[str]:
    """The plans that ship with the app, by file name (default first)."""
    names = sorted(p.stem for p in FOLDER.glob("*.toml"))
    return sorted(names, key=lambda n: n != DEFAULT)


def plan_by_id(plan_id: str) -> Plan:
    """The plan with this id (a shipped file's name, or an upload's id), checked against this app's pages."""
    if plan_id in shipped_ids():
        try:
            data = (FOLDER / f"{plan_id}.toml").read_bytes()
        except OSError:
            return load_plan(FOLDER / f"{plan_id}.toml", page_titles())  # says what went wrong
    else:
        with LOCK:
            data = UPLOADED.get(plan_id)
    if data is None:
        raise AttnvizError(f'This server process has no lecture plan "{plan_id}". An uploaded plan lives in the '
                           "memory of the server process it was uploaded to, until that process restarts: upload "
                           "it again on the Lecture page.")
    return checked_plan(data, tuple(page_titles().items()))


@shared(max_entries=16)
def checked_plan(data: bytes, pages: tuple[tuple[str, str], ...]) -> Plan:
    """A plan's bytes parsed and checked against these pages, once (3.6 ms for the default plan here, and every run
    of a step's page asks: the lecture bar, the predict-first gate, the notes view each second). A plan with a
    problem is not kept: its error is raised again on each call."""
    return parse_plan(data, dict(pages))


def add_upload(data: bytes) -> str:
    """Check an uploaded plan (AttnvizError with the problem) and keep it; its id for links ('u' + its hash)."""
    checked_plan(data, tuple(page_titles().items()))
    plan_id = "u" + hashlib.sha256(data).hexdigest()[:10]
    with LOCK:
        UPLOADED[plan_id] = data
        UPLOADED.move_to_end(plan_id)
        while len(UPLOADED) > MAX_UPLOADED:
            UPLOADED.popitem(last=False)
    return plan_id
