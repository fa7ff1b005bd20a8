"""The links of a lecture: a step's page in its state (for the projector), and the view a student should open.

A step's link is relative ("./step_by_step?…"), so it works under any server address and base path. The
projector's link adds present=1 and the lecture's own keys (which plan, which step, which room); the students'
link leaves those out: a student gets the same view with the sidebar open, to explore on their own, and
without the lecture bar (Previous/Next are the lecturer's).
"""

from __future__ import annotations

from urllib.parse import urlencode

from attnviz.lecture.plan import RESERVED, Step

LECTURE_KEYS = RESERVED  # set by the lecture, not by a step's state


def step_query(step: Step, *, lecture: str | None = None, number: int | None = None, room: str | None = None,
               present: bool = True) -> list[tuple[str, str]]:
    """The query parameters that open this step: its state, then present=1 and the lecture's keys."""
    pairs = list(step.state)
    if present:
        pairs.append(("present", "1"))
        if step.focus:  # the figure a projector shows first (ui/focus.py); a student's page keeps its order
            pairs.append(("fig", step.focus))
    for key, value in (("lecture", lecture), ("step", number), ("room", room)):
        if value is not None:
            pairs.append((key, str(value)))
    return pairs


def step_link(step: Step, **keys) -> str:
    """The relative link that opens this step ('./' + its URL path + '?' + step_query(step, **keys))."""
    query = urlencode(step_query(step, **keys))
    return f"./{step.page}" + (f"?{query}" if query else "")


def student_link(page_url: str, query: list[tuple[str, str]]) -> str:
    """The link students should open: the page's address as the browser sees it (no query), with the current
    query parameters minus the lecture's own (presentation mode and the lecture bar are the lecturer's)."""
    kept = [(k, v) for k, v in query if k not in LECTURE_KEYS]
    return page_url.split("?", 1)[0] + (f"?{urlencode(kept)}" if kept else "")
