"""The step of a lecture a page shows, read from its link (ui/lecture/bar.py), and who shows it: the projector (the
room's presenter key), a follower (the room, no key), or a plain lecture link (no room)."""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.lecture import Plan, Step, step_link
from attnviz.lecture.store import RoomState


@dataclass(frozen=True)
class LectureStep:
    """The step of a lecture this page is showing, and who shows it."""

    plan_id: str
    plan: Plan
    number: int  # 1-based
    room: str = ""  # "" when the link carries none (or an unknown one)
    key: str = ""  # the room's presenter key when the link carries the right one: this is the projector
    state: RoomState | None = None  # the room as this run read it
    page: str | None = None  # the URL path of the page drawn (None: not known, taken as the step's own)

    @property
    def step(self) -> Step:
        return self.plan.step(self.number)

    @property
    def detour(self) -> bool:
        """This page is not the step's own: opened from it (a block of the Transformer map), inside the lecture."""
        return self.page is not None and self.page != self.step.page

    @property
    def presenter(self) -> bool:
        return bool(self.room and self.key)

    @property
    def follower(self) -> bool:
        return bool(self.room and not self.key)

    def link(self, number: int) -> str:
        """This page's kind of link to step `number` of the same lecture: the projector's (present=1) for the
        projector and a plain lecture link, a follower's (no present) for a follower. Never the presenter key: the
        projector's browser holds it (ui/lecture/presenter_key.py)."""
        return step_link(self.plan.step(number), lecture=self.plan_id, number=number, room=self.room or None,
                         present=not self.follower)
