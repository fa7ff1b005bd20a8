"""A step as its followers see it, drawn once per room, step and Reveal in each server process, and sent to every
follower: a class of 300 costs a Next about what one follower's page costs, plus Streamlit's own cost of sending a
drawn page to each phone.

/follow?room=<code> stays open on a student's phone for the whole lecture (app_pages/follow.py). Its one fragment
draws the room's step: the first follower of a process to need a (room, step, Reveal) runs the step's page once as a
follower's page, in a session no browser holds (ui/streamlit_private.record_page, with ui/shared_view.FLAG set: the
page leaves out each follower's own parts), and keeps what it drew; every follower's fragment then draws that again at
its place (draw_again), its widgets shown but disabled (shown_only: the view's controls belong to the lecture;
"Explore this view" opens the full page), and the answer box, each student's own, drawn live into its place. The room
watcher (ui/lecture/wake.py) reruns the fragment when the room moves, as it ran a step page's poll before.

What a follower sees is what the step's page draws for a follower, the same figures and words: the bar with "Explore
this view", the question before Reveal, the class's answers beside the model's after it. Where this Streamlit lacks
what it takes (the `replay` feature), in AppTest, or for a view that holds media files (served per session), the
follow link opens the step's page itself, as before.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture import Plan, step_link, step_query
from attnviz.lecture.kinds import Ask, Right
from attnviz.lecture.store import RoomState, StoreError
from ui import streamlit_private
from ui.accessibility import document_title
from ui.lecture import answers, wake
from ui.lecture.follow import navigate
from ui.lecture.lecture_step import LectureStep
from ui.lecture.plans import plan_by_id
from ui.lecture.step_state import asked, right_answer
from ui.lecture.store import lecture_store, store_message
from ui.memo import SharedCache
from ui.shared_view import DRAWN_AS, FLAG

RECORD_TIMEOUT_S = 120.0  # a step's first draw on a busy 2-core machine, models loaded: well under this
log = logging.getLogger(__name__)
_VIEWS = SharedCache(max_entries=48)  # a lecture of 15 steps, each before and after its Reveal, in one room or two


@dataclass(frozen=True)
class FollowerView:
    """What a step's page draws for its followers in one room, at one Reveal state."""

    plan: Plan
    number: int
    revealed: bool
    drawn: tuple  # of streamlit_private.Drawn, the widgets drawn shown-only
    controls: bool  # it shows controls (disabled): the page says why
    ask: Ask | None  # what the step asks (computed once; None: no question, or computed in each box)
    right: Right | None = None  # its right answer, for what each follower is told of its own answer after Reveal


def forget_room(code: str) -> int:
    """Let go of the room's views (nobody follows it in this process any more): how many."""
    return _VIEWS.drop(lambda key: key[0] == code)


wake.when_a_room_is_left(forget_room)


_drawn = [0]  # how many views this process has drawn for followers (a benchmark's and a test's figure)


def views_held() -> int:
    return len(_VIEWS)


def views_drawn() -> int:
    return _drawn[0]


class NotRecorded(Exception):
    """No view was kept (the next follower tries again): the room moved while the page drew (moved), or the page did
    not finish in time, or its view holds media files."""

    def __init__(self, moved: bool = False):
        super().__init__("the room moved" if moved else "the step's view cannot be shared")
        self.moved = moved


def view_for(code: str, state: RoomState) -> FollowerView:
    """The room's step as its followers see it now, drawn once per process (the first follower waits for it, the
    others wait for that one). AttnvizError: the plan cannot be read; NotRecorded: no view (the caller falls back)."""
    revealed = state.step in state.revealed
    key = (code, state.plan_id, state.step, revealed)
    # a class's followers all ask at once, each Next: the view held is read without the cache's lock (a dict read),
    # which 150 threads of a process would otherwise queue on
    return _VIEWS.peek_unlocked(key) or _VIEWS.get(key, lambda: _record(code, state, revealed))


def _record(code: str, state: RoomState, revealed: bool) -> FollowerView:
    began = time.perf_counter()
    plan = plan_by_id(state.plan_id)
    step = plan.step(state.step)
    query = urlencode(step_query(step, lecture=state.plan_id, number=state.step, room=code, present=False))
    recording = streamlit_private.record_page(step.page, query, RECORD_TIMEOUT_S, {FLAG: True}, (DRAWN_AS,))
    if recording is None or recording.holds_media:  # its images would be served to the recording's session only
        raise NotRecorded
    if recording.state.get(DRAWN_AS) != (state.step, revealed):
        raise NotRecorded(moved=True)
    drawn = streamlit_private.with_styles(tuple(streamlit_private.shown_only(part) for part in recording.drawn),
                                          recording.styles)
    _drawn[0] += 1
    log.info("attnviz: room %s step %d%s drawn for its followers in %.2f s", code, state.step,
             " (revealed)" if revealed else "", time.perf_counter() - began)
    controls = any(part.is_control for top in drawn for part in top.walk())
    ask = right = None
    if step.answer is not None:
        try:
            right = right_answer(step)
            ask = asked(step, right)
        except AttnvizError:  # each box says why
            ask = right = None
    return FollowerView(plan, state.step, revealed, drawn, controls, ask, right)


def draw(code: str, state: RoomState, view: FollowerView) -> None:
    """The view in this run, the answer box this browser's own."""
    at = LectureStep(state.plan_id, view.plan, view.number, room=code, state=state)
    # the step's own title in the browser, as the step's page sets it (a drawing replays elements, not the page's
    # config): what a screen reader says of the tab, and its history entry
    st.set_page_config(page_title=document_title(f"Step {view.number} of {len(view.plan.steps)}: {at.step.title}"))
    answers.show_note()  # an answer refused since the last run (sent as the step was revealed)

    def box(container) -> None:
        with container:
            _answer(at, view.ask)

    def mine(container) -> None:  # after Reveal: what this student answered, right or not
        if view.ask is not None and view.right is not None:
            with container:
                answers.your_answer(at, view.ask, view.right)

    # a new step shows its top (its bar and question): the page stays, and kept the last step's scroll
    st.html(NEW_STEP.replace("STEP", f"{code}/{state.plan_id}/{view.number}"), unsafe_allow_javascript=True)
    where, live = st.container(), {answers.ANSWER_BOX: box, answers.MINE_BOX: mine}
    streamlit_private.draw_again(view.drawn[:1], where, live)  # the lecture bar
    if view.controls:
        where.caption(CONTROLS)
    streamlit_private.draw_again(view.drawn[1:], where, live)


# Once per step on this page (a Reveal draws the same step again, and brings the phone to the figure that answers the
# question: ui/focus.py): back to the top of the page, and a figure of the new step is brought up at its own Reveal,
# even one of the same id (a new set of figures brought up; the old one's hold sees it replaced and ends).
NEW_STEP = """<script>
(() => {
  const win = window.parent || window, doc = win.document;
  if (win.__attnvizFollowStep === "STEP") return;
  const first = win.__attnvizFollowStep === undefined;
  win.__attnvizFollowStep = "STEP";
  if (first) return;  // the page's first step: it opened at its top
  win.__attnvizFocus = {};
  const main = doc.querySelector('[data-testid="stMain"]');
  if (main) main.scrollTop = 0;
  win.scrollTo(0, 0);
})();
</script>"""

CONTROLS = ("Following the lecture: the controls on this page show the step's settings and cannot be changed here "
            "(that is what **Explore this view**, in the bar, is for).")


@st.fragment  # a tap on an answer draws the box again, not the whole view
def _answer(at: LectureStep, ask: Ask | None) -> None:
    answers.answer_widgets(at, ask)


@st.fragment  # no timer: the room watcher (ui/lecture/wake.py) reruns it when the room moves
def follow_room(code: str) -> None:
    """The room's step as a follower sees it now; the watcher runs this again when the room moves (Next, Reveal) or
    ends, or when its store goes out of reach and comes back."""
    try:
        state = wake.latest(code) or lecture_store().room(code)
    except StoreError as err:
        store_message(err)
        return
    if state is None:
        st.warning(f"Room {code} has ended (or expired): this page stays as it is.", icon=":material/logout:")
        return
    wake.follow(code, state, False, streamlit_private.fragment_id())
    try:
        view = view_for(code, state)
    except NotRecorded as why:
        if why.moved:  # the watcher wakes this page again for the room's new step
            st.caption("Moving to the lecture's step…")
        else:  # the step's page, run in this tab: it follows the room from there, as every follower did before
            navigate(step_link(plan_by_id(state.plan_id).step(state.step), lecture=state.plan_id, number=state.step,
                               room=code, present=False))
        return
    except AttnvizError as err:
        store_message(err)
        return
    draw(code, state, view)


def can_share() -> bool:
    """Whether this process can draw a view once for every follower (a served app whose Streamlit has `replay`)."""
    return streamlit_private.works("replay") and streamlit_private.works("wake") and streamlit_private.can_record()
