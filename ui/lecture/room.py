"""Rooms: where a projector's tab tells which step it shows, so the presenter-notes view (another tab, the
lecturer's laptop) can follow it. In this process's memory, keyed by a short code that the lecture's links carry.

Limits: a room is seen by tabs served by the same server process. On the class server (deploy/) HAProxy pins
a browser to one process with a cookie, so the lecturer's tabs in one browser share it; a notes view opened in
another browser (a phone) may land on another process and then says it has no news of the room.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a projector
MAX_ROOMS = 256


@dataclass
class Room:
    lecture: str = ""  # the plan's id
    step: int = 0  # the step the projector shows (1-based; 0 = none yet)
    revealed: set[tuple[str, int]] = field(default_factory=set)  # (plan, step) whose figures were revealed
    updated: float = 0.0  # time.time() of the last change


ROOMS: OrderedDict[str, Room] = OrderedDict()
LOCK = threading.Lock()


def new_code() -> str:
    return "".join(secrets.choice(LETTERS) for _ in range(4))


def clean_code(code: object) -> str:
    """A room code as the links carry it (upper case letters and digits), or "" for anything else."""
    text = str(code or "").strip().upper()
    return text if 1 <= len(text) <= 12 and all(c in LETTERS for c in text) else ""


def _room(code: str) -> Room:
    room = ROOMS.get(code)
    if room is None:
        room = ROOMS[code] = Room()
        while len(ROOMS) > MAX_ROOMS:
            ROOMS.popitem(last=False)
    ROOMS.move_to_end(code)
    return room


def show_step(code: str, lecture: str, step: int) -> None:
    """The projector of room `code` shows this step of this plan now."""
    with LOCK:
        room = _room(code)
        if (room.lecture, room.step) != (lecture, step):
            room.lecture, room.step, room.updated = lecture, step, time.time()


def reveal(code: str, lecture: str, step: int) -> None:
    with LOCK:
        room = _room(code)
        room.revealed.add((lecture, step))
        room.updated = time.time()


def is_revealed(code: str, lecture: str, step: int) -> bool:
    with LOCK:
        room = ROOMS.get(code)
        return room is not None and (lecture, step) in room.revealed


def where(code: str) -> tuple[str, int, float] | None:
    """(plan id, step, when it changed) that room `code`'s projector shows; None before it shows any."""
    with LOCK:
        room = ROOMS.get(code)
        return (room.lecture, room.step, room.updated) if room is not None and room.step else None
