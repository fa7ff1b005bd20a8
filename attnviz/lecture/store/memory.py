"""The lecture store in this process's memory: what `streamlit run app.py` uses (one process, nothing to install).
Everything is lost when the process ends; rooms are seen only by sessions of this process."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace

from attnviz.lecture.store.base import (
    Answer,
    LectureStore,
    LimitReached,
    RoomState,
    StoreError,
    StoreLimits,
    WrongKey,
    answer_text,
    browser_full,
    clean_code,
    clean_key,
    clean_link_id,
    clean_owner,
    clean_plan_id,
    clean_session,
    link_query,
    new_code,
    new_key,
    plan_bytes,
    server_full,
    step_number,
)


@dataclass
class _Room:
    state: RoomState
    key: str
    touched: float
    answers: dict[int, dict[str, str]] = field(default_factory=dict)  # step -> session -> value
    spent: dict[int, float] = field(default_factory=dict)  # step -> seconds on it in the visits before the current one
    owner: str = ""  # the browser that made it
    admitted: bool = True  # made by an admitted lecturer (base.py: which rooms may go for a new one)

    def answered(self) -> bool:
        return any(self.answers.values())


MAX_ANSWERS = 100_000  # answers one step keeps (a class is far smaller: this bounds a flood of sessions)


class MemoryStore(LectureStore):
    def __init__(self, limits: StoreLimits | None = None, clock=time.time):
        self.limits = limits or StoreLimits()
        self._clock = clock
        self._lock = threading.Lock()
        self._rooms: OrderedDict[str, _Room] = OrderedDict()
        self._plans: OrderedDict[str, bytes] = OrderedDict()  # oldest upload first
        self._plan_makers: dict[str, tuple[str, bool]] = {}  # plan id -> (owner, admitted)
        self._links: dict[str, tuple[str, float]] = {}
        self._recent: dict[str, deque[float]] = {}  # session -> times of its last answers (the flood limit)

    # rooms
    def _forget_expired(self, now: float) -> None:
        ttl = self.limits.room_hours * 3600
        for code in [c for c, r in self._rooms.items() if now - r.touched > ttl]:
            del self._rooms[code]

    def _live(self, code: str) -> _Room | None:
        code = clean_code(code)
        room = self._rooms.get(code)
        if room is not None and self._clock() - room.touched > self.limits.room_hours * 3600:
            del self._rooms[code]
            return None
        return room

    def _changed(self, room: _Room, **fields) -> RoomState:
        now = self._clock()
        room.state = replace(room.state, version=room.state.version + 1, **fields)
        room.touched = now
        self._rooms.move_to_end(room.state.code)
        return room.state

    def create_room(self, plan_id: str, owner: str = "", admitted: bool = True) -> tuple[str, str]:
        plan_id, owner = clean_plan_id(plan_id), clean_owner(owner)
        with self._lock:
            now = self._clock()
            self._forget_expired(now)
            by_age = sorted(self._rooms.values(), key=lambda r: r.touched)  # least recently changed first
            if owner:
                own = [r for r in by_age if r.owner == owner]
                if len(own) >= self.limits.rooms_per_browser:
                    gone = next((r for r in own if not r.answered()), None)
                    if gone is None:
                        raise browser_full(self.limits.rooms_per_browser, "live rooms with answers")
                    del self._rooms[gone.state.code]
                    by_age.remove(gone)
            if len(self._rooms) >= self.limits.rooms:
                idle = self.limits.idle_minutes * 60
                may_go = [r for r in by_age if not r.answered() and (not r.admitted or now - r.touched >= idle)]
                gone = min(may_go, key=lambda r: (r.admitted, r.touched), default=None)
                if gone is None:
                    raise server_full(self.limits.rooms, "live rooms", "store.rooms")
                del self._rooms[gone.state.code]
            code = new_code()
            while code in self._rooms:
                code = new_code()
            key = new_key()
            state = RoomState(code, plan_id, 1, frozenset(), now, now, 1)
            self._rooms[code] = _Room(state, key, now, owner=owner, admitted=admitted)
            return code, key

    def rooms_running(self, plan_id: str) -> int:
        plan_id = clean_plan_id(plan_id)
        with self._lock:
            self._forget_expired(self._clock())
            return sum(r.state.plan_id == plan_id for r in self._rooms.values())

    def room(self, code: str) -> RoomState | None:
        with self._lock:
            room = self._live(code)
            return None if room is None else room.state

    def version(self, code: str) -> int | None:
        state = self.room(code)
        return None if state is None else state.version

    def _presenter_room(self, code: str, key: str) -> _Room:
        room = self._live(code)
        if room is None:
            raise StoreError(f"There is no room {clean_code(code)} (it may have expired): open the lecture again from "
                             "the Lecture page.")
        key = clean_key(key)
        if not hmac_equal(room.key, key):
            raise WrongKey("This link's presenter key is not this room's: only the lecturer's link can change the "
                           "room. Nothing was changed.")
        return room

    def is_presenter(self, code: str, key: str) -> bool:
        try:
            with self._lock:
                self._presenter_room(code, key)
            return True
        except StoreError:
            return False

    def go_to(self, code: str, key: str, step: int) -> RoomState:
        with self._lock:
            room = self._presenter_room(code, key)
            step = step_number(step)
            if step == room.state.step:
                return room.state
            now = self._clock()
            room.spent[room.state.step] = now - room.state.step_started  # the step left: its time so far
            return self._changed(room, step=step, step_started=now - room.spent.get(step, 0.0))

    def reveal(self, code: str, key: str, step: int) -> RoomState:
        with self._lock:
            room = self._presenter_room(code, key)
            step = step_number(step)
            if step in room.state.revealed:
                return room.state
            return self._changed(room, revealed=room.state.revealed | {step})

    # answers
    def answer(self, code: str, step: int, session: str, value: str) -> int:
        code, step = clean_code(code), step_number(step)
        value, session = answer_text(value, self.limits), clean_session(session)
        with self._lock:
            room = self._live(code)
            if room is None:
                raise StoreError(f"There is no room {clean_code(code)} any more: the lecture has ended or expired.")
            if step in room.state.revealed:
                raise StoreError(f"Step {step} is already revealed: answers are closed.")
            if session not in room.answers.get(step, {}) and len(room.answers.get(step, {})) >= MAX_ANSWERS:
                raise LimitReached(f"Step {step} already has {MAX_ANSWERS:,} answers, the most a step keeps.")
            now = self._clock()
            recent = self._recent.setdefault(session, deque())
            while recent and now - recent[0] > 60:
                recent.popleft()
            if len(recent) >= self.limits.answers_per_minute:
                raise LimitReached(f"At most {self.limits.answers_per_minute} answers a minute from one browser: "
                                   "wait a moment and answer again.")
            recent.append(now)
            if len(self._recent) > 10 * MAX_ANSWERS:  # sessions long gone: forget their times
                self._recent = {s: r for s, r in self._recent.items() if r and now - r[-1] <= 60}
            room.answers.setdefault(step, {})[session] = value
            self._changed(room)
            return len(room.answers[step])

    def answer_count(self, code: str, step: int) -> int:
        with self._lock:
            room = self._live(code)
            return 0 if room is None else len(room.answers.get(step_number(step), {}))

    def answers(self, code: str, step: int, key: str | None = None) -> list[Answer]:
        step = step_number(step)
        with self._lock:
            room = self._live(code)
            if room is None:
                return []
            if step not in room.state.revealed:
                self._presenter_room(code, key or "")  # WrongKey before Reveal without the key
            return [Answer(s, v) for s, v in room.answers.get(step, {}).items()]

    def my_answer(self, code: str, step: int, session: str) -> str | None:
        with self._lock:
            room = self._live(code)
            return None if room is None else room.answers.get(step_number(step), {}).get(clean_session(session))

    # uploaded plans
    def put_plan(self, plan_id: str, data: bytes, owner: str = "", admitted: bool = True) -> None:
        plan_id, data, owner = clean_plan_id(plan_id), plan_bytes(data, self.limits), clean_owner(owner)
        with self._lock:
            self._forget_expired(self._clock())
            if plan_id in self._plans:  # the same file again: its place is the newest; an admitted lecturer's now
                self._plans[plan_id] = data
                self._plans.move_to_end(plan_id)
                if admitted and not self._plan_makers[plan_id][1]:
                    self._plan_makers[plan_id] = (owner, True)
                return
            running = {r.state.plan_id for r in self._rooms.values()}
            idle = [p for p in self._plans if p not in running]  # oldest first
            if owner:
                own = [p for p in self._plans if self._plan_makers[p][0] == owner]
                if len(own) >= self.limits.plans_per_browser:
                    gone = next((p for p in own if p in idle), None)
                    if gone is None:
                        raise browser_full(self.limits.plans_per_browser, "uploaded plans")
                    self._drop_plan(gone)
                    idle.remove(gone)
            if len(self._plans) >= self.limits.plans:
                may_go = [p for p in idle if admitted or not self._plan_makers[p][1]]
                gone = min(may_go, key=lambda p: self._plan_makers[p][1], default=None)  # stable: oldest first
                if gone is None:
                    raise server_full(self.limits.plans, "uploaded plans", "store.plans")
                self._drop_plan(gone)
            self._plans[plan_id] = data
            self._plan_makers[plan_id] = (owner, admitted)

    def _drop_plan(self, plan_id: str) -> None:
        del self._plans[plan_id]
        del self._plan_makers[plan_id]

    def plan(self, plan_id: str) -> bytes | None:
        plan_id = clean_plan_id(plan_id)
        with self._lock:
            return self._plans.get(plan_id)

    # short links
    def shorten(self, query: str) -> str:
        query = link_query(query, self.limits)
        link_id = link_id_of(query)
        with self._lock:
            self._links[link_id] = (query, self._clock())
        return link_id

    def expand(self, link_id: str) -> str | None:
        text = clean_link_id(link_id)
        with self._lock:
            held = self._links.get(text)
            if held is None or self._clock() - held[1] > self.limits.link_days * 86400:
                self._links.pop(text, None)
                return None
            return held[0]

    def ping(self) -> None:
        return None


def link_id_of(query: str) -> str:
    """A query's short id: 10 characters of its hash (so the same view gets the same id on every process)."""
    return hashlib.blake2b(query.encode("utf-8"), digest_size=8).hexdigest()[:10]


def hmac_equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())

