"""A lecture step's focus: the figure that fills the projector's first screen once the step is revealed.

A page declares its figures with ids: `with ui.figure("causal_card"): ...` (a keyed container, `.st-key-figure_<id>`
in the browser; docs/lecture.md lists every page's ids). A lecture step's `focus = "<id>"` puts `fig=<id>` in the step's link
(attnviz.lecture.links). On a projector (presentation mode), `focus_style` then
- lifts the figure's column, where it sits in one, to the row's full width and first place, and
- scrolls the figure to the top of the screen once it is drawn (after Reveal on a predict-first step), and keeps it
  there while the figures around it (heatmaps, plotly charts, pictures) finish drawing (for 60 s; never after an
  action of the lecturer's own since Reveal: a scroll, a click, a key other than the clicker's on the page, focus
  moved onto a control).
Without presentation mode `fig` does nothing: a student's page keeps its own order.
"""

from __future__ import annotations

import contextlib
import re

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ui.present import presenting

URL_KEY = "fig"
ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


PANEL = "_attnviz_focus_panel"  # this run's panel for a figure: {"fid", "place", "slot", "drawn"} or None


def figure(fid: str, where=None, **container_args):
    """The container of one of the page's figures (made in `where`, a container or column, else in the page);
    `fid` is the id a lecture step's focus names. A panel held for this figure (hold_panel) is drawn in it first."""
    box = (where or st).container(key=f"figure_{fid}", **container_args)
    held = st.session_state.get(PANEL)
    if held is not None and held["fid"] == fid:
        held["drawn"] = True
        return held["place"](box)  # the part of the box the page's figure goes into
    return box


def hold_panel(fid: str, place) -> None:
    """place(box) (a revealed step's class answers) draws into figure `fid`'s box before the page fills it, and
    returns the part of the box the page's figure goes into: the screen the step's focus brings up holds both the
    figure that answers the question and what the class answered. Should the page not draw that figure (a plan that
    names another page's), it is drawn at this place when the page is drawn (mark_drawn)."""
    st.session_state[PANEL] = {"fid": fid, "place": place, "slot": st.container(), "drawn": False}


def no_panel() -> None:
    st.session_state[PANEL] = None


def panel_left_out() -> None:
    """The page is drawn: a held panel whose figure never came goes to its place (ui.state.mark_drawn)."""
    held = st.session_state.get(PANEL)
    if held is None or held["drawn"]:
        return
    held["drawn"] = True
    # a part's rerun after a full run that never got here: its place is gone
    with contextlib.suppress(StreamlitAPIException):
        held["place"](held["slot"], False)


def focused() -> str:
    """The id of the figure the link brings first on a projector ("" when none, or when not presenting)."""
    raw = str(st.query_params.get(URL_KEY) or "").strip()
    return raw if raw and ID.fullmatch(raw) and presenting() else ""


def focus_style(hold: bool = False) -> None:
    """On a projector with a focus in the link: the CSS and the script that bring that figure to the first screen.
    hold: not yet (a lecture question waits for Reveal above the figures: it stays in view until then)."""
    fid = focused()
    if fid and hold:  # the hold after Reveal must hear what the lecturer does from Reveal's own click on
        st.html(ACTIONS, unsafe_allow_javascript=True)
    elif fid:
        scroll_to(fid)


def scroll_to(fid: str) -> None:
    """Bring figure `fid` to the top of the screen once it is drawn (a projector's focus; a follower's phone at
    Reveal), and keep it there while the figures around it finish drawing."""
    st.html(ACTIONS, unsafe_allow_javascript=True)
    st.html(FOCUS.replace("FIGURE_ID", fid), unsafe_allow_javascript=True)


# What the person at this page did last, and when Reveal was pressed, heard from the page's first run on (a predict-
# first step's runs before Reveal send it; a page without one gets it with FOCUS). A figure's hold ends at the first
# action after it began; Reveal's own click, and the clicker's keys on the page itself, are not such actions. The hold
# cannot hear these itself: its script runs only once the revealed run arrives, and a click on Students at once after
# Reveal, on a machine slow to send that run, came before it (the popover then went 174 px off the top under the hold).
# Its element takes no room (the marker: ui/accessibility.py): a step's question fills the projector's screen.
# An action is a scroll (wheel, touch), a click or tap, a key (←/→ and the Reveal keys b, "." and Enter only on a
# control: Enter on Students), and focus moved onto a control (a keyboard's Tab is a key already; this is focus moved
# by a screen reader or a script, which sends its key only after the move: a hold's tick in between scrolled the
# Students button and its popover off the top). The app moves focus only where the focus already was (the heatmap's
# own pickers), so a run of the app's own ends no hold.
ACTIONS = """<span class="attnviz-script" hidden></span><script>
(() => {
  const win = window.parent || window;
  if (win.__attnvizActed) return;
  const acted = win.__attnvizActed = {last: 0, reveal: 0};
  const doc = win.document;
  const act = () => { acted.last = performance.now(); };
  const controls = 'input, textarea, select, button, a, [role="button"], [contenteditable="true"]';
  const onControl = (t) => !!(t && t.closest && t.closest(controls));
  const lectureKeys = new Set(["ArrowLeft", "ArrowRight", "b", "B", ".", "Enter"]);
  const alone = new Set(["Shift", "Control", "Alt", "Meta"]);
  for (const kind of ["wheel", "touchmove", "pointerdown"]) win.addEventListener(kind, act, {passive: true, capture: true});
  win.addEventListener("keydown", (e) => {
    if (!alone.has(e.key) && (!lectureKeys.has(e.key) || onControl(e.target))) act();
  }, {passive: true, capture: true});
  doc.addEventListener("focusin", (e) => {
    if (onControl(e.target) && !e.target.closest(".st-key-lecture_reveal")) act();
  }, true);
  // Reveal pressed (a click, or the clicker's key: ui/lecture/bar.py KEYS_JS clicks the button): what came before it
  // (a pointerdown on the button, Tab to it) is not an action after it
  doc.addEventListener("click", (e) => {
    if (e.target && e.target.closest && e.target.closest(".st-key-lecture_reveal")) acted.reveal = performance.now();
  }, true);
})();
</script>"""


# The page's header bar covers the top 3.75rem: the figure stops just below it. The script is sent on every run but
# works once per figure and page load: after Reveal (a rerun) it finds the figure; after that a rerun (a widget the
# lecturer changes) leaves the scroll alone. A new step is a new page load (the lecture bar's links).
FOCUS = """<style>
.st-key-figure_FIGURE_ID { scroll-margin-top: 4rem; }
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] .st-key-figure_FIGURE_ID) { flex-wrap: wrap; }
[data-testid="stColumn"]:has(.st-key-figure_FIGURE_ID) { order: -1; flex: 1 1 100% !important; min-width: 100%; }
</style><script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const win = doc.defaultView;
  const id = "FIGURE_ID";
  const state = win.__attnvizFocus || (win.__attnvizFocus = {});
  if (state[id]) return;  // a loop is already waiting for this figure, or it was brought up on this page load
  state[id] = "waiting";
  // the hold began at Reveal's click where this page had one (the lecturer's projector), else now (a step that asks
  // nothing; a follower's phone at the room's Reveal); any action of the person's own after that ends it (ACTIONS)
  const acted = win.__attnvizActed;
  const since = acted.reveal || performance.now();
  const over = () => acted.last > since;
  // a follower's page that moved on to a new step replaced the set (ui/lecture/follower_view.py NEW_STEP): this
  // step's hold is over, and a figure of the same id on the new step is brought up at its own Reveal
  const replaced = () => win.__attnvizFocus !== state;
  const finish = () => { state[id] = "done"; };  // the hold is over
  const start = performance.now();
  let found = 0, moved = 0, timer = 0, sizes = null;
  const box = () => doc.querySelector(".st-key-figure_" + id);
  // back to the top when it is not there: a figure above it that finished drawing pushed it down
  const place = () => {
    const b = box();
    if (over() || replaced() || !b) return;
    const want = parseFloat(win.getComputedStyle(b).scrollMarginTop) || 0;
    if (Math.abs(b.getBoundingClientRect().top - want) > 3) { b.scrollIntoView({block: "start"}); moved = performance.now(); }
  };
  const end = () => { clearInterval(timer); if (sizes) sizes.disconnect(); finish(); };
  // A push comes from a size change above the figure: the page's main column grows or shrinks, or the figure's own
  // box does. A ResizeObserver reports it before the frame is painted, so the figure never shows out of place; the
  // check below (5 times a second) covers the rest and decides when the figure is at rest. Reading the layout on
  // every animation frame instead kept the renderer busy for the whole hold (0.28 s of its main thread every 5 s on
  // the decoder block page; now 0.02 s).
  const check = () => {
    const now = performance.now();
    if (over() || replaced()) { end(); return; }
    const b = box();
    if (b && b.getBoundingClientRect().height > 0) {
      if (!found) {
        found = now;
        const main = doc.querySelector('[data-testid="stMainBlockContainer"]');
        sizes = new win.ResizeObserver(place);
        sizes.observe(b);
        if (main) sizes.observe(main);
      }
      place();
      // figures above it (plotly, heatmaps, pictures, tables) finish drawing after it appears and push it down.
      // "done" (what the walk test waits for) once no run goes on, nothing is left to draw and it has stayed put for
      // 1.5 s; the hold itself goes on for 60 s, so that a late push (a clean-clone CI run saw the decoder block
      // 323 px down after "done" on a busy machine) is undone too
      const busy = doc.querySelector('[data-testid="stStatusWidget"]')
        || Object.values(win.attnvizHeatmaps || {}).some((h) => !h.drawn)
        || [...doc.querySelectorAll('[data-testid="stPlotlyChart"]')].some((c) => !c.querySelector('.main-svg'))
        || [...doc.querySelectorAll('[data-testid="stMain"] img')].some((i) => !i.complete);
      if (busy) moved = now;
      if (now - Math.max(found, moved) > 1500) state[id] = "done";
      if (now - found > 60000) end();
    } else if (now - start > 120000) {  // never drawn: a later run's script tries again
      clearInterval(timer); delete state[id];
    }
  };
  timer = win.setInterval(check, 200);
  check();
})();
</script>"""
