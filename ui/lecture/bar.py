"""What a page shows while it is a step of a lecture: its link carries lecture=<plan>&step=<k>, and in a room
room=<code> (the Lecture page's "Open on the projector" makes it), plus key=<presenter key> on the lecturer's own
links.

Who is looking, from the link alone:
- the projector (room and its presenter key): the lecture bar with Previous and Next, the Students popover (the
  room's follow link and this view, as QR codes), and it moves the room: opening step k with the key takes the
  room to step k, so the keys and a clicker move every follower;
- a follower (room, no key; /follow sends a student there): "Step k of N" and the title, "Explore this view", and
  the step's answer box before Reveal; nothing it does changes the room;
- a plain lecture link (no room): today's bar and a Reveal kept in this session.
Both the projector and a follower poll the room (follow.poll_room): when the room is at another step they open
it, and a Reveal draws the page again.

Previous and Next are plain links to the neighbouring step's full link: the browser opens it as a student's
browser would open a shared link, so every setting of the step comes from its URL (a page switch inside a
session keeps the values its widgets already hold, and st.switch_page refuses a parameter bound to a widget).
The keys ←/→ and PageUp/PageDown (what a presenter's clicker sends) follow the same links; its "blank screen" key (b
or .) and Enter press Reveal, so a clicker runs the whole lecture.

Predict first: a step with predict_first = true shows its question instead of the page's figures until it is
revealed (kept in the room: back to a revealed step, it stays revealed; every follower's figures too): ui/lecture/gate.py.
A page opened from a step (a Transformer map block: the map's links carry the lecture's keys) is a detour: its bar leads
back to the step, and Next goes on to the next one.
"""

from __future__ import annotations

import html
from dataclasses import replace
from urllib.parse import urlencode

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.lecture import LECTURE_KEYS, follow_link, qr_png
from attnviz.lecture.store import StoreError, StoreUnavailable
from attnviz.lecture.store.base import clean_code
from ui.accessibility import document_title
from ui.across_pages import current_page
from ui.announce import announce
from ui.lecture.addresses import class_base, loopback_warning, short_view_link
from ui.lecture.follow import close_phone_sidebar, explore_link, poll_room, wait_for_store
from ui.lecture.gate import closed_until_reveal
from ui.lecture.lecture_step import LectureStep
from ui.lecture.plans import plan_by_id
from ui.lecture.presenter_key import held_key, hold_key, key_in_link
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store, store_message
from ui.lecture.warm import warm_plan
from ui.memo import shared
from ui.menu import page_titles
from ui.present import asked_in_link


def lecture_in_link() -> LectureStep | None:
    """The lecture step the page's link names, or None. A plan that cannot be found or read, a room that is not
    there and a wrong key are said, not raised; a wrong key changes nothing."""
    plan_id = str(st.query_params.get("lecture") or "").strip()
    if not plan_id:
        return None
    try:
        plan = plan_by_id(plan_id)
    except StoreUnavailable as err:  # an uploaded plan lives in the store
        return store_down(err)
    except AttnvizError as err:
        st.warning(f"Lecture: {err}", icon=":material/co_present:")
        return None
    raw = str(st.query_params.get("step") or "1").strip()
    number = int(raw) if raw.isdigit() else 0
    if not 1 <= number <= len(plan.steps):
        st.warning(f'Lecture: there is no step "{raw}" in "{plan.title}" (steps 1 to {len(plan.steps)}); showing step '
                   "1's controls.", icon=":material/co_present:")
        number = 1
    at = LectureStep(plan_id, plan, number, page=current_page())
    if st.query_params.get("room") is None:
        return at
    try:
        return in_room(at, str(st.query_params.get("room")))
    except StoreUnavailable as err:
        return store_down(err)
    except StoreError as err:
        store_message(err)
        return at


def store_down(err: StoreUnavailable) -> None:
    """The store cannot be reached (Redis restarting): a page of a room says so and stops, its figures unshown (the
    room's Reveal cannot be read, and a follower must not see a predict-first step's figures early), and draws
    itself again as soon as the store answers; a plain lecture link without a room goes on as the page alone."""
    store_message(err)
    if st.query_params.get("room") is None:
        return None
    wait_for_store()
    st.stop()


def in_room(at: LectureStep, code: str) -> LectureStep:
    """The step in its room (StoreError for a malformed code or a store that cannot be reached). The projector (the
    room's presenter key, in its link or held by its browser) takes the room to its step; a wrong key in the link is
    said, and the page follows the room."""
    store = lecture_store()
    code = clean_code(code)
    state = store.room(code)
    if state is None:
        st.warning(f"Lecture: there is no room {code} (a room is forgotten hours after its lecture, or when the server "
                   "restarts): this page shows the step on its own.", icon=":material/co_present:")
        return at
    if state.plan_id != at.plan_id:
        st.warning(f"Lecture: room {code} runs another plan than this link's: this page shows the step on its own.",
                   icon=":material/co_present:")
        return at
    at = replace(at, room=code, state=state)
    linked = key_in_link()
    key = linked if linked is not None else held_key(code) if asked_in_link() else None
    if key is None:
        return at
    if not store.is_presenter(code, key):
        if linked is not None:  # a key held from an earlier room of the same code is simply not this one's
            st.error(f"This link's presenter key is not room {code}'s: only the lecturer's link moves the room, "
                     "reveals a step or reads the answers before Reveal. Nothing was changed; this page follows the "
                     "room.", icon=":material/key_off:")
        return at
    hold_key(code, key)  # the address drops it; this browser keeps it for the next steps' page loads
    if state.step != at.number:  # the projector opened another step (a key, a clicker): the room goes there
        state = store.go_to(code, key, at.number)
    return replace(at, key=key, state=state)


CURRENT = "_attnviz_lecture_step"  # the lecture step this run's page is (None: not a lecture's page)


def current_step() -> LectureStep | None:
    """The lecture step this run's page shows (draw_bar read it from the link), or None."""
    return st.session_state.get(CURRENT)


def detour_query(at: LectureStep) -> list[tuple[str, str]]:
    """What a link from this step's page to another page adds to stay in the lecture (a Transformer map block): the
    projector's presentation mode, and the lecture's keys (the room's, without the presenter key)."""
    pairs = [] if at.follower else [("present", "1")]
    pairs += [("lecture", at.plan_id), ("step", str(at.number))]
    return pairs + ([("room", at.room)] if at.room else [])


def draw_bar() -> LectureStep | None:
    """The lecture bar when the page is a step of a lecture (returns that step), else nothing (None); a student who
    broke away from following gets the way back."""
    at = lecture_in_link()
    st.session_state[CURRENT] = at
    if at is None:
        back_to_following()
        return None
    if at.room:  # a room's page in a process that has not warmed its plan (a class server's other processes)
        warm_plan(at.plan_id, at.plan, right_answer)
    n = len(at.plan.steps)
    # the step's own title in the browser, and said to a screen reader: a step change is a page load
    where = f"Step {at.number} of {n}: {at.step.title}"
    st.set_page_config(page_title=document_title(where))
    announce(where, key=f"step {at.plan_id} {at.number}")
    if at.detour:  # a page opened from the step's (a map block): back to it, or on to the next step
        back = f'<a class="attnviz-lecture-prev" href="{html.escape(at.link(at.number))}" target="_self">← Back to ' \
               f'{html.escape(page_titles().get(at.step.page, "the step"))}</a>'
        st.html(BAR_CSS + '<div class="attnviz-lecture-bar">' + back + '<span class="attnviz-lecture-where">'
                f"<b>Step {at.number} of {n}</b> · {html.escape(at.step.title)}</span>"
                + ("" if at.follower else side_link(at, at.number + 1, "next", "Next →", n)) + "</div>"
                + ("" if at.follower else KEYS_JS), unsafe_allow_javascript=True)
        if at.room:
            poll_room(at)
        return at
    if at.follower:
        if closed_until_reveal(at):  # the view explored alone would show the figures the question asks about
            explore = ('<span class="attnviz-lecture-none" title="The step\'s figures are the answer to its question: '
                       'explore them once the lecturer reveals it.">Explore this view after Reveal</span>')
        else:  # a link in this tab (st.link_button opens a new one): the way back is one click on the page it opens
            explore = (f'<a class="attnviz-lecture-explore" href="{html.escape(explore_link(at, query_pairs()))}" '
                       'target="_self" title="Leave the lecture to change this view yourself; one click brings you '
                       'back to following.">Explore this view</a>')
        st.html(BAR_CSS + '<div class="attnviz-lecture-bar"><span class="attnviz-lecture-where">'
                f"<b>Step {at.number} of {n}</b> · {html.escape(at.step.title)}</span>{explore}</div>")
        close_phone_sidebar()
        poll_room(at)
        return at
    left, right = st.columns([5, 1.35], vertical_alignment="center")
    left.html(bar_html(at, n) + KEYS_JS, unsafe_allow_javascript=True)
    with right.popover("Students", icon=":material/qr_code_2:", width="stretch"):
        students_popover(at)
    if at.presenter:
        poll_room(at)
    return at


def show_link(link: str, key: str) -> None:
    """A link in the popover, wrapped inside it (a caption ran out of the popover at 1024 px), with a copy button:
    a student who cannot scan the code types or pastes it."""
    with st.container(key=key):
        st.code(link, language=None, wrap_lines=True)


def students_popover(at: LectureStep) -> None:
    """The room's follow link (one per lecture) and this view, each as a QR code, at the address the class can
    reach; a loopback address is said. The two codes side by side: one above the other ran 710 px down, and a
    1024 × 768 projector's popover cut "This view"'s code off (a narrow screen stacks them again)."""
    base = class_base(at.step.page)
    follow_box, view_box = st.columns(2, gap="medium") if at.room else (None, st.container())
    if follow_box is not None:
        with follow_box:
            follow = follow_link(base, at.room)
            st.markdown(f"**Follow the lecture** (room {at.room}): every student's screen moves with the projector "
                        "and they answer its questions.")
            with st.container(key="lecture_follow_qr"):
                st.image(students_qr(follow), width=260, output_format="PNG")  # JPEG would blur the modules
            show_link(follow, "lecture_follow_link")
    with view_box:
        if closed_until_reveal(at):
            st.markdown("**This view** (the page to explore alone) gets its code after Reveal: before that it would "
                        "show the class the figures that answer the question.")
        else:
            view_code(at, base)
    loopback_warning(base)  # under the codes: they come first on a projector's short screen
    if at.presenter:  # the notes' link carries the presenter key, and this screen is the class's: never shown here
        lecture_page = f"./lecture?{urlencode([('lecture', at.plan_id)])}"
        st.caption(f"Your presenter notes are not shown here: their link carries the room's presenter key, and the "
                   f"class reads this screen. Open them on your own phone from the [Lecture plan page]({lecture_page})"
                   " (its *For you alone* card), in a window the class does not see.")


def view_code(at: LectureStep, base: str) -> None:
    """This view's link and QR code, for a student to explore it alone."""
    view_query = urlencode([(k, v) for k, v in query_pairs() if k not in LECTURE_KEYS])
    link = short_view_link(f"{base}/{at.step.page}" if at.step.page else f"{base}/", view_query)
    st.markdown("**This view**: the same page and settings, to explore alone (no lecture bar).")
    with st.container(key="lecture_qr"):
        st.image(students_qr(link), width=260 if at.room else 340, output_format="PNG")
    show_link(link, "lecture_view_link")


def back_to_following() -> None:
    """A page opened from "Explore this view" (room=<code>, no lecture): one click to follow again."""
    raw = st.query_params.get("room")
    if raw is None:
        return
    try:
        code = clean_code(raw)
    except StoreError:
        return
    back = html.escape(f"./follow?{urlencode([('room', code)])}")
    st.html(BAR_CSS + f'<div class="attnviz-lecture-bar"><span class="attnviz-lecture-where">Exploring on your own, '
            f'away from lecture room {code}.</span><a class="attnviz-lecture-back" href="{back}" target="_self">'
            "Back to following</a></div>")


@shared(max_entries=64)
def students_qr(link: str) -> bytes:
    """The QR code of a link, one pixel per module: the browser draws it 340 px wide with square pixels (BAR_CSS's
    image-rendering). Encoding takes ~12 ms here and a PNG of 8 px modules ~30 ms more, on every run of a step's
    page: this is made once per link, and small."""
    return qr_png(link, scale=1)


def side_link(at: LectureStep, number: int, which: str, text: str, n: int) -> str:
    """The bar's link to step `number` (a span, not a link, where there is no such step)."""
    if 1 <= number <= n:
        return f'<a class="attnviz-lecture-{which}" href="{html.escape(at.link(number))}" target="_self">{text}</a>'
    return f'<span class="attnviz-lecture-none">{text}</span>'


def bar_html(at: LectureStep, n: int) -> str:
    """Step k of N, its title, and the Previous/Next links."""
    title = html.escape(at.step.title)
    return (BAR_CSS + '<div class="attnviz-lecture-bar">' + side_link(at, at.number - 1, "prev", "← Previous", n)
            + f'<span class="attnviz-lecture-where"><b>Step {at.number} of {n}</b> · {title}</span>'
            + side_link(at, at.number + 1, "next", "Next →", n) + "</div>")


def query_pairs() -> list[tuple[str, str]]:
    """The page's query parameters now, a repeated key as repeated pairs."""
    return [(key, value) for key in st.query_params for value in st.query_params.get_all(key)]


BAR_CSS = """<style>
.attnviz-lecture-bar { display: flex; align-items: center; gap: 0.8rem; font-size: 1rem; }
.attnviz-lecture-bar a, .attnviz-lecture-none { white-space: nowrap; padding: 0.25rem 0.7rem; border-radius: 0.5rem;
  border: 1px solid rgba(49, 51, 63, 0.25); text-decoration: none; color: inherit; }
.attnviz-lecture-bar a:hover { border-color: currentColor; text-decoration: underline; }
/* no such step: quieter, still 4.5:1 (WCAG 1.4.3); the way back: white on the theme's accent, 6.8:1 */
.attnviz-lecture-none { opacity: 0.6; }
.attnviz-lecture-bar a.attnviz-lecture-back { background: #a82d3a; border-color: #a82d3a; color: white; }
.attnviz-lecture-where { flex: 1; min-width: 0; line-height: 1.25; }  /* a long title wraps: never cut with "…" */
.st-key-lecture_answer p { font-size: 1.1rem; }
.st-key-lecture_qr img, .st-key-lecture_follow_qr img { image-rendering: pixelated; max-width: 100%; }
/* a link in the Students popover breaks anywhere (an address has no spaces to wrap at): never past the popover */
.st-key-lecture_view_link code, .st-key-lecture_follow_link code { overflow-wrap: anywhere; word-break: break-all; }
</style>"""

# ←/→ and PageUp/PageDown (what a presenter's clicker sends for its arrows) follow the bar's links; its "blank screen"
# key (b or ., by make) and Enter press Reveal. Installed once per browser page (a step change loads the next page
# anew); a key typed into a text box, a select box or a slider is left to it, and Enter on a button or a link to it.
KEYS_JS = """<script>
(() => {
  const win = window.parent || window;
  if (win.__attnvizLectureKeys) return;
  win.__attnvizLectureKeys = true;
  const doc = win.document;
  const keys = {ArrowRight: 'next', PageDown: 'next', ArrowLeft: 'prev', PageUp: 'prev', b: 'reveal', B: 'reveal',
                '.': 'reveal', Enter: 'reveal'};
  // a click while a run is going can be lost with it (a page's first load can end with a second run): Reveal waits
  // until no run is going (and for the button, on a page still being drawn), and presses again while the button is
  // still there 2 s after a run it caused (3 presses at most; Reveal twice is Reveal once)
  const running = () => {
    const app = doc.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    return state === 'running' || state === 'rerunRequested' || !!doc.querySelector('[data-testid="stStatusWidget"]');
  };
  const reveal = (presses, waits) => {
    const button = doc.querySelector('.st-key-lecture_reveal button');
    if (presses >= 3 || waits > 600 || (button && button.disabled)) return;
    if (running() || (!button && presses === 0 && waits < 50)) {
      win.setTimeout(() => reveal(presses, waits + 1), 100);
      return;
    }
    if (!button) return;
    button.click();
    win.setTimeout(() => reveal(presses + 1, waits + 20), 2000);
  };
  doc.addEventListener('keydown', (e) => {
    const which = keys[e.key];
    if (!which || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || (e.shiftKey && e.key !== 'B')) return;
    const t = e.target;
    const typing = 'input, textarea, select, [role="slider"], [role="listbox"], [role="combobox"]';
    if (t && t.closest && (t.isContentEditable || t.closest(typing))) return;
    if (e.key === 'Enter' && t && t.closest && t.closest('button, a, summary, [role="button"], [role="tab"]')) return;
    // the page itself has the focus (a click on it): a key there would draw the main area's keyboard ring round the
    // whole projected page, and this key is the clicker's, not a move through the page
    if (t && t.matches && t.matches('[data-testid="stMain"]')) t.blur();
    if (which === 'reveal') {
      e.preventDefault();
      reveal(0, 0);
      return;
    }
    const link = doc.querySelector('a.attnviz-lecture-' + which);
    if (!link) return;
    e.preventDefault();
    win.location.assign(link.href);
  }, true);
})();
</script>"""
