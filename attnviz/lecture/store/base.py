"""The lecture store's contract, one for every backend (tests/lecture/test_store_contract.py runs the same tests on
each).

A room is one lecture given once: its plan, the step the projector shows, the steps revealed, when each step began,
and a presenter key (a random secret made with the room; only links for the lecturer carry it). Without the key
nobody moves the room, reveals a step, or reads a step's answers before it is revealed.

Rooms and uploaded plans are the lecturers': the app lets only an admitted lecturer make them (ui/lecture/lecturer.py),
and the store keeps a flood of them from pushing a lecturer's out. Each is made by a browser (`owner`, its anonymous
id) and says whether that browser was an admitted lecturer (`admitted`: on the server's own machine, or with the
lecturers' passphrase) or merely allowed because the server lets everyone (lecture.lecturers = "everyone").
- Rooms: a browser keeps at most `rooms_per_browser` live rooms (a new one pushes out its own oldest that has no
  answers). With `rooms` live rooms on the server, a new room pushes out the least recently changed room that has no
  answers and is not an admitted lecturer's, else an admitted one's unchanged for `idle_minutes`; a room with answers
  never goes, and with none to push out the new room is refused (LimitReached).
- Plans: a browser keeps at most `plans_per_browser` uploads (its own oldest that no live room runs goes first). With
  `plans` kept, a new upload pushes out the oldest plan that no live room runs, not an admitted lecturer's before
  another's, and an admitted lecturer's only for another admitted lecturer's upload; else it is refused.

Every call that a browser's input reaches checks that input here (codes, keys, answers, ids), so a crafted link
gets an AttnvizError worded for the screen, never a backend's exception.
"""

from __future__ import annotations

import re
import secrets
from abc import ABC, abstractmethod
from dataclasses import dataclass

from attnviz.errors import AttnvizError

CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a projector
CODE_LENGTH = 5
KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,64}")  # secrets.token_urlsafe's alphabet
LINK_ID_PATTERN = re.compile(r"[A-Za-z0-9]{4,16}")
SESSION_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")  # a Streamlit session id (a UUID) or a random token
PLAN_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,120}")  # a shipped plan's file stem or "u" + an upload's hash
MAX_STEP = 10_000


class StoreError(AttnvizError):
    """A lecture-store problem worded for the screen."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (Redis down, wrong password): lecture views say so, other pages go on."""


class WrongKey(StoreError):
    """A presenter action with a missing or wrong presenter key: nothing changed."""


class LimitReached(StoreError):
    """A limit of the store's settings was reached (answer size, answers per minute, rooms, lifetime)."""


@dataclass(frozen=True)
class StoreLimits:
    """Bounds on what a class can put in the store: each a setting ([store] in .streamlit/attnviz.toml)."""

    answer_chars: int = 200  # the longest answer kept (a token, a choice, a number are far shorter)
    answers_per_minute: int = 30  # per browser session, across steps: a flood gets a message, not a store full
    rooms: int = 200  # rooms alive at once; the least recently changed one without answers goes first
    room_hours: float = 12.0  # a room (and its answers) is forgotten this long after its last change
    plans: int = 64  # uploaded plans kept
    link_chars: int = 8_000  # the longest query a short link may stand for
    link_days: float = 30.0  # a short link is forgotten this long after it was made
    plan_bytes: int = 200_000  # the biggest uploaded plan kept (the Lecture page's uploader says 200 kB)
    rooms_per_browser: int = 3  # live rooms one browser may hold (a lecturer's reload, a second tab)
    idle_minutes: float = 60.0  # an admitted lecturer's room without answers, unchanged this long, may go for a new one
    plans_per_browser: int = 8  # uploads one browser keeps (a lecturer's edits of one plan: its oldest goes)


@dataclass(frozen=True)
class RoomState:
    """A room as the store holds it now."""

    code: str
    plan_id: str
    step: int  # 1-based step the projector shows
    revealed: frozenset[int]  # steps whose figures (and answers) were revealed
    step_started: float  # when `step`'s clock started: time.time() at entering it, less the time spent on it before
    #                      (a step the lecture comes back to goes on counting from where it stopped)
    started: float  # time.time() when the room was made
    version: int  # grows with every change: a follower compares it to know whether to redraw


@dataclass(frozen=True)
class Answer:
    """One browser session's answer to one step (anonymous: the session id is a random token, no name)."""

    session: str
    value: str


def new_code() -> str:
    return "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))


def new_key() -> str:
    return secrets.token_urlsafe(18)


def clean_code(code: object) -> str:
    """A room code as links carry it (upper case), or raise StoreError for anything else."""
    text = str(code or "").strip().upper()
    if not (1 <= len(text) <= 12 and all(c in CODE_LETTERS for c in text)):
        raise StoreError(f"'{str(code)[:40]}' is not a room code: a room code is {CODE_LENGTH} letters and digits "
                         "as the projector shows it.")
    return text


def clean_key(key: object) -> str:
    text = str(key or "").strip()
    if not KEY_PATTERN.fullmatch(text):
        raise WrongKey("This link's presenter key is missing or malformed: only the lecturer's link can change "
                       "the room. Nothing was changed.")
    return text


def clean_owner(owner: object) -> str:
    """A room's or plan's browser id ("" for none), or StoreError."""
    return "" if owner in ("", None) else clean_session(owner)


def clean_session(session: object) -> str:
    """A browser session's id (anonymous: a random token), or StoreError."""
    text = str(session or "")
    if not SESSION_PATTERN.fullmatch(text):
        raise StoreError("This browser's session id is malformed, so the answer was not kept: reload the page.")
    return text


def clean_plan_id(plan_id: object) -> str:
    text = str(plan_id or "")
    if not PLAN_ID_PATTERN.fullmatch(text):
        raise StoreError(f"'{text[:40]}' is not a lecture plan's id (up to 120 letters, digits, '_', '.', '-').")
    return text


def clean_link_id(link_id: object) -> str:
    text = str(link_id or "").strip()
    if not LINK_ID_PATTERN.fullmatch(text):
        raise StoreError(f"'{text[:40]}' is not a short link id (4 to 16 letters and digits).")
    return text


def step_number(step: object) -> int:
    """A 1-based step number, or StoreError."""
    if isinstance(step, bool):
        raise StoreError(f"'{step}' is not a step number.")
    try:
        number = int(step) if isinstance(step, int) or (isinstance(step, str) and len(step) <= 20) else None
    except ValueError:
        number = None
    if number is None:
        raise StoreError(f"'{str(step)[:20]}' is not a step number.")
    if not 1 <= number <= MAX_STEP:
        raise StoreError(f"There is no step {number}: steps run from 1 to at most {MAX_STEP:,}.")
    return number


def answer_text(value: object, limits: StoreLimits) -> str:
    """An answer as it is kept, or StoreError (empty) / LimitReached (too long)."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise StoreError("An answer is a token, a choice or a number: this one was not kept.")
    text = str(value)  # as given: a token's leading space is part of it
    if not text.strip():
        raise StoreError("An empty answer was not kept: pick or type an answer first.")
    if len(text) > limits.answer_chars:
        raise LimitReached(f"An answer may have at most {limits.answer_chars} characters; this one has "
                           f"{len(text):,}. It was not kept.")
    return text


def link_query(query: object, limits: StoreLimits) -> str:
    """A query a short link may stand for, or StoreError / LimitReached."""
    if not isinstance(query, str):
        raise StoreError("A short link stands for a link's query text.")
    if len(query) > limits.link_chars:
        raise LimitReached(f"This view's link has {len(query):,} characters; a short link may stand for at most "
                           f"{limits.link_chars:,} (store.link_chars).")
    return query


def plan_bytes(data: object, limits: StoreLimits) -> bytes:
    if not isinstance(data, (bytes, bytearray)):
        raise StoreError("An uploaded plan is the bytes of a TOML file.")
    if len(data) > limits.plan_bytes:
        raise LimitReached(f"An uploaded plan may have at most {limits.plan_bytes:,} bytes; this one has "
                           f"{len(data):,}. It was not kept.")
    return bytes(data)


def browser_full(limit: int, what: str) -> LimitReached:
    return LimitReached(f"This browser already holds {limit} {what}, each still in use: nothing was pushed out. "
                        "Ask the server's keeper to raise the setting if you need more.")


def server_full(limit: int, what: str, setting: str) -> LimitReached:
    return LimitReached(f"This server already holds {limit} {what} ({setting}), each in use by a lecture: try again "
                        "later, or raise the setting.")


class LectureStore(ABC):
    """Rooms, answers, uploaded plans and short links. Every method may raise StoreUnavailable."""

    limits: StoreLimits

    # rooms
    @abstractmethod
    def create_room(self, plan_id: str, owner: str = "", admitted: bool = True) -> tuple[str, str]:
        """A new room for this plan at step 1 -> (code, presenter key), made by browser `owner` ("" : none counted),
        an admitted lecturer or not (the module's docstring: which room goes for it). LimitReached when none may go."""

    @abstractmethod
    def rooms_running(self, plan_id: str) -> int:
        """How many live rooms run this plan (a plan in use: its notes are the lecturer's)."""

    @abstractmethod
    def room(self, code: str) -> RoomState | None:
        """The room with this code, or None (unknown or expired). StoreError for a malformed code."""

    @abstractmethod
    def version(self, code: str) -> int | None:
        """The room's version alone (what a follower polls, cheaply), or None for no such room."""

    @abstractmethod
    def is_presenter(self, code: str, key: str) -> bool:
        """Whether `key` is this room's presenter key (False for a malformed or wrong key, or no room)."""

    @abstractmethod
    def go_to(self, code: str, key: str, step: int) -> RoomState:
        """Move the room to `step` (1-based) with the presenter key. WrongKey changes nothing."""

    @abstractmethod
    def reveal(self, code: str, key: str, step: int) -> RoomState:
        """Reveal `step`'s figures and answers with the presenter key. WrongKey changes nothing."""

    # answers
    @abstractmethod
    def answer(self, code: str, step: int, session: str, value: str) -> int:
        """Keep (or replace) this session's answer to `step` -> the step's answer count. Refused (StoreError) once
        the step is revealed; LimitReached for an answer too long or too many from one session per minute."""

    @abstractmethod
    def answer_count(self, code: str, step: int) -> int:
        """How many sessions answered `step` (anyone may know the count)."""

    @abstractmethod
    def answers(self, code: str, step: int, key: str | None = None) -> list[Answer]:
        """The answers to `step`: for everyone once it is revealed, before that only with the presenter key
        (WrongKey otherwise)."""

    @abstractmethod
    def my_answer(self, code: str, step: int, session: str) -> str | None:
        """This session's own answer to `step`, if any."""

    # uploaded plans
    @abstractmethod
    def put_plan(self, plan_id: str, data: bytes, owner: str = "", admitted: bool = True) -> None:
        """Keep an uploaded plan's bytes under its id, uploaded by browser `owner`, an admitted lecturer or not (the
        module's docstring: which plan goes for it). LimitReached when none may go."""

    @abstractmethod
    def plan(self, plan_id: str) -> bytes | None:
        """An uploaded plan's bytes, or None."""

    # short links
    @abstractmethod
    def shorten(self, query: str) -> str:
        """A short id for this query string (the same query gets the same id). LimitReached past link_chars."""

    @abstractmethod
    def expand(self, link_id: str) -> str | None:
        """The query a short id stands for, or None (unknown or expired). StoreError for a malformed id."""

    @abstractmethod
    def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot be reached."""
