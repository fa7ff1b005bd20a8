"""What a page shows while it is a step of a lecture: its link carries lecture=<plan>&step=<k>&room=<code>
(the Lecture page's "Open on the projector" makes it).

- The lecture bar, above the page's title: step k of N and its title, Previous and Next, and a popover with the
  QR code of the view for the students.
- Previous and Next are plain links to the neighbouring step's full link: the browser opens it as a student's
  browser would open a shared link, so every setting of the step comes from its URL (a page switch inside a
  session keeps the values its widgets already hold, and st.switch_page refuses a parameter bound to a widget).
  The keys ←/→ and PageUp/PageDown (what a presenter's clicker sends) follow the same links.
- Predict first: a step with predict_first = true shows its question and a Reveal button instead of the page's
  figures until the lecturer reveals them (kept per room and step: back to a revealed step, it stays revealed).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture import Plan, Step, qr_png, step_link, student_link
from ui.lecture import room as rooms
from ui.lecture.plans import plan_by_id
from ui.memo import shared

REVEALED = "_attnviz_lecture_revealed"  # this session's revealed (plan, step) pairs, for a link without a room


@dataclass(frozen=True)
class LectureStep:
    """The step of a lecture this page is showing."""

    plan_id: str
    plan: Plan
    number: int  # 1-based
    room: str  # "" when the link carries none

    @property
    def step(self) -> Step:
        return self.plan.step(self.number)

    def link(self, number: int) -> str:
        """The projector's link to step `number` of the same lecture, in the same room."""
        return step_link(self.plan.step(number), lecture=self.plan_id, number=number, room=self.room or None)


def lecture_in_link() -> LectureStep | None:
    """The lecture step the page's link names, or None. A plan that cannot be found or read is said, not raised."""
    plan_id = str(st.query_params.get("lecture") or "").strip()
    if not plan_id:
        return None
    try:
        plan = plan_by_id(plan_id)
    except AttnvizError as err:
        st.warning(f"Lecture: {err}", icon=":material/co_present:")
        return None
    raw = str(st.query_params.get("step") or "1").strip()
    number = int(raw) if raw.isdigit() else 0
    if not 1 <= number <= len(plan.steps):
        st.warning(f'Lecture: there is no step "{raw}" in "{plan.title}" (steps 1 to {len(plan.steps)}); showing step '
                   "1's controls.", icon=":material/co_present:")
        number = 1
    return LectureStep(plan_id, plan, number, rooms.clean_code(st.query_params.get("room")))


def draw_bar() -> LectureStep | None:
    """The lecture bar when the page is a step of a lecture (returns that step), else nothing (None)."""
    at = lecture_in_link()
    if at is None:
        return None
    if at.room:
        rooms.show_step(at.room, at.plan_id, at.number)  # the presenter-notes view follows this
    n = len(at.plan.steps)
    left, right = st.columns([5, 1.35], vertical_alignment="center")
    left.html(bar_html(at, n) + KEYS_JS, unsafe_allow_javascript=True)
    with right.popover("Students", icon=":material/qr_code_2:", width="stretch"):
        link = student_link(st.context.url or "", query_pairs())
        st.caption("This view for the students: the same page and settings, without presentation mode and the "
                   "lecture bar.")
        with st.container(key="lecture_qr"):
            st.image(students_qr(link), width=340, output_format="PNG")  # JPEG would blur the modules
        st.caption(link)
    return at


@shared(max_entries=64)
def students_qr(link: str) -> bytes:
    """The QR code of a link, one pixel per module: the browser draws it 340 px wide with square pixels (BAR_CSS's
    image-rendering). Encoding takes ~12 ms here and a PNG of 8 px modules ~30 ms more, on every run of a step's
    page: this is made once per link, and small."""
    return qr_png(link, scale=1)


def bar_html(at: LectureStep, n: int) -> str:
    """Step k of N, its title, and the Previous/Next links (a span, not a link, where there is no such step)."""
    def side(number: int, which: str, text: str) -> str:
        if 1 <= number <= n:
            return f'<a class="attnviz-lecture-{which}" href="{html.escape(at.link(number))}" target="_self">{text}</a>'
        return f'<span class="attnviz-lecture-none">{text}</span>'

    title = html.escape(at.step.title)
    return (BAR_CSS + '<div class="attnviz-lecture-bar">' + side(at.number - 1, "prev", "← Previous")
            + f'<span class="attnviz-lecture-where"><b>Step {at.number} of {n}</b> · {title}</span>'
            + side(at.number + 1, "next", "Next →") + "</div>")


def query_pairs() -> list[tuple[str, str]]:
    """The page's query parameters now, a repeated key as repeated pairs."""
    return [(key, value) for key in st.query_params for value in st.query_params.get_all(key)]


def is_revealed(at: LectureStep) -> bool:
    mine = (at.plan_id, at.number) in st.session_state.get(REVEALED, set())
    return mine or (bool(at.room) and rooms.is_revealed(at.room, at.plan_id, at.number))


def reveal(at: LectureStep) -> None:
    st.session_state.setdefault(REVEALED, set()).add((at.plan_id, at.number))
    if at.room:
        rooms.reveal(at.room, at.plan_id, at.number)


def predict_first_gate(at: LectureStep | None) -> None:
    """On a predict-first step not yet revealed: the question, big, and a Reveal button; the page stops here, before
    its figures."""
    if at is None or not at.step.predict_first or is_revealed(at):
        return
    with st.container(key="lecture_question", border=True):
        st.markdown("**Predict first.** " + at.step.question.replace("\n", " "))
        st.button("Reveal", key="lecture_reveal", type="primary", icon=":material/visibility:", on_click=reveal,
                  args=(at,), help="Show the page's figures (the keys ← → still change the step).")
    st.stop()


BAR_CSS = """<style>
.attnviz-lecture-bar { display: flex; align-items: center; gap: 0.8rem; font-size: 1rem; }
.attnviz-lecture-bar a, .attnviz-lecture-none { white-space: nowrap; padding: 0.25rem 0.7rem; border-radius: 0.5rem;
  border: 1px solid rgba(49, 51, 63, 0.25); text-decoration: none; color: inherit; }
.attnviz-lecture-bar a:hover { border-color: #ff4b4b; color: #ff4b4b; }
.attnviz-lecture-none { opacity: 0.35; }
.attnviz-lecture-where { flex: 1; min-width: 0; line-height: 1.25; }  /* a long title wraps: never cut with "…" */
.st-key-lecture_question p { font-size: 1.6rem; line-height: 1.4; }
.st-key-lecture_qr img { image-rendering: pixelated; }
</style>"""

# ←/→ and PageUp/PageDown (a presenter's clicker) follow the bar's links. Installed once per browser page (a step
# change loads the next page anew); a key typed into a text box, a select box or a slider is left to it.
KEYS_JS = """<script>
(() => {
  const win = window.parent || window;
  if (win.__attnvizLectureKeys) return;
  win.__attnvizLectureKeys = true;
  const doc = win.document;
  const keys = {ArrowRight: 'next', PageDown: 'next', ArrowLeft: 'prev', PageUp: 'prev'};
  doc.addEventListener('keydown', (e) => {
    const which = keys[e.key];
    if (!which || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const t = e.target;
    const typing = 'input, textarea, select, [role="slider"], [role="listbox"], [role="combobox"]';
    if (t && t.closest && (t.isContentEditable || t.closest(typing))) return;
    const link = doc.querySelector('a.attnviz-lecture-' + which);
    if (!link) return;
    e.preventDefault();
    win.location.assign(link.href);
  }, true);
})();
</script>"""
