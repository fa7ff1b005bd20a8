"""A lecture run by keyboard alone, in a real Chromium: the lecturer uploads a plan, starts its room and opens the
presenter notes (Tab, Enter, Space; the file dialog is the system's), Reveal and Next there; a student on a phone
answers a token question, a choice and a number with the keyboard. What a screen reader is told is read off the page:
each step's document title, and the words written into a polite live region that was already there (a region's
first contents are not read; its changes are): "Step 2 of 3: The causal mask", "Revealed: ...", "Your answer is in:
'dog' ...". And on pages of every kind of control, every stop of Tab shows a ring, and Tab comes back round (no
trap). Screenshots in test-artifacts/keyboard_*.png: the focused token on the phone, a focused control of each page."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from browser_helpers import (
    ROOT,
    chromium_page,
    people_browser,
    through_the_menu,
    wait_for_app_idle,
    wait_for_text,
    wait_until_settled,
)
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ARTIFACTS = ROOT / "test-artifacts"
PLAN = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
pytestmark = pytest.mark.browser

# Every text written into an element inside a polite live region that was there before it: what a screen reader
# says (a region added with its text already in it says nothing). Installed before the page's own scripts.
HEARD = """(() => {
  window.__heard = [];
  const polite = (node) => {
    const e = node.nodeType === 1 ? node : node.parentElement;
    const region = e && e.closest('[aria-live="polite"], [role="status"]:not([aria-live])');
    return region && region !== node ? region : null;
  };
  new MutationObserver((records) => {
    for (const r of records) {
      const nodes = r.type === 'characterData' ? [r.target] : [...r.addedNodes];
      for (const n of nodes) if (polite(n) && n.textContent.trim()) window.__heard.push(n.textContent.trim());
    }
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();"""

# JS: the live region no longer holds these words
STALE_GONE = """(w) => !(document.getElementById('attnviz-live') || {innerText: ''}).innerText.includes(w)"""

# the focused element (inside a shadow root too): its role, name, text
FOCUSED = """() => { let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return e ? {tag: e.tagName, role: e.getAttribute('role') || '', name: e.getAttribute('aria-label') || '',
              text: (e.innerText || e.value || '').trim().slice(0, 80)} : null; }"""


def tab_to(page, wanted, most: int = 120, backwards: bool = False) -> dict:
    """Press Tab (or Shift+Tab) until the focused element is the one `wanted(focused)` says; that element."""
    for _ in range(most):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        focused = page.evaluate(FOCUSED)
        if focused and wanted(focused):
            return focused
    raise AssertionError(f"{most} presses of Tab never reached the control (last: {page.evaluate(FOCUSED)})")


def arrow_to(page, text: str, most: int = 40) -> dict:
    """In a group of radio buttons (the focus on one of them), → until the focused one reads `text`."""
    for _ in range(most):
        focused = page.evaluate(FOCUSED)
        if focused and focused["role"] == "radio" and focused["text"] == text:
            return focused
        page.keyboard.press("ArrowRight")
    raise AssertionError(f"→ never reached {text!r} (last: {page.evaluate(FOCUSED)})")


def heard(page, words: str, timeout_ms: float = 30_000) -> None:
    """Until a polite live region has been told `words` (a part of what it was told)."""
    page.wait_for_function("(w) => window.__heard.some(t => t.includes(w))", arg=words, timeout=timeout_ms,
                           polling=100)


def at_step(page, number: int, title: str) -> None:
    try:
        wait_for_text(page, f"Step {number} of 3", timeout_ms=120_000)  # drawn in place: the follow link stays open
    except PlaywrightTimeout:
        page.screenshot(path=str(ARTIFACTS / f"keyboard_follower_not_at_step_{number}.png"), full_page=True)
        raise
    wait_for_app_idle(page)
    expected = f"Step {number} of 3: {title} · attnviz"
    page.wait_for_function("(t) => document.title === t", arg=expected, timeout=30_000, polling=100)
    heard(page, f"Step {number} of 3: {title}")


def button(name: str):
    return lambda f: f["tag"] == "BUTTON" and name in f["text"]


def next_on_notes(notes, number: int) -> None:
    """Tab back to the notes' Next and press Enter, once the Reveal's run is over (a key pressed during a run can be
    lost with it), until the notes show step `number`."""
    for _ in range(3):
        wait_for_app_idle(notes)
        tab_to(notes, button("Next"), backwards=True)
        notes.keyboard.press("Enter")
        try:
            wait_for_text(notes, f"Step {number} of 3", timeout_ms=30_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"Enter on the notes' Next never reached step {number}")


def test_a_lecture_by_keyboard_alone_a_student_answers_token_choice_and_number(server):
    with people_browser() as browser, chromium_page(1366, 900) as lecturer:
        # the lecturer: the plan's file, its room, the presenter notes (a new tab), all by keyboard
        choosers = []  # the system's file dialog, as Playwright catches it (listened for before it can open)
        lecturer.on("filechooser", lambda chooser: choosers.append(chooser))
        lecturer.goto(f"{server}/lecture")
        wait_for_text(lecturer, "Lecture mode")
        wait_for_app_idle(lecturer)
        tab_to(lecturer, lambda f: f["tag"] == "SUMMARY" and "Use your own plan" in f["text"])
        lecturer.keyboard.press("Enter")
        lecturer.locator('[data-testid="stFileUploader"] button').last.wait_for(timeout=30_000)  # the expander open
        tab_to(lecturer, button("Upload"))
        lecturer.keyboard.press("Enter")
        for _ in range(300):
            if choosers:
                break
            lecturer.wait_for_timeout(100)
        assert choosers, "Enter on Upload opened no file dialog"
        choosers[0].set_files(str(PLAN))
        wait_for_text(lecturer, "The class answers", "Step 1 of 3: Where does 'ran' look?")
        wait_for_app_idle(lecturer)
        tab_to(lecturer, button("Start the class's room"))
        lecturer.keyboard.press("Enter")
        follow = wait_for_text(lecturer, "/follow?room=").split("/follow?room=", 1)[1].split()[0]
        tab_to(lecturer, lambda f: f["tag"] == "A" and "Presenter notes (room" in f["text"])
        with lecturer.context.expect_page() as opened:
            lecturer.keyboard.press("Enter")
        notes = opened.value
        wait_for_text(notes, "Step 1 of 3", "not revealed yet")

        student = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        student.add_init_script(HEARD)
        student.goto(f"{server}/follow?room={follow}")

        # a token: Tab into the sentence's tokens (one stop for the group), → to 'dog', Space
        at_step(student, 1, "Where does 'ran' look?")
        assert student.locator(".st-key-lecture_by_keys").is_visible()  # the keys' way, said (a touch screen has none)
        tab_to(student, lambda f: f["role"] == "radio")
        arrow_to(student, "dog")
        student.screenshot(path=str(ARTIFACTS / "keyboard_token_focus_phone.png"))
        group = student.locator('[role="radiogroup"]').first.get_attribute("aria-label")
        assert "'ran' (token 3)" in group, group  # entering the group, a screen reader names the question
        student.keyboard.press("Space")
        wait_for_text(student, "Your answer is in: 'dog'", where=".st-key-lecture_answer")
        heard(student, "Your answer is in: 'dog'")

        # Reveal, then Next, on the notes: Tab and Enter
        tab_to(notes, button("Reveal"))
        notes.keyboard.press("Enter")
        heard(student, "Revealed")
        wait_for_text(notes, "Revealed")
        next_on_notes(notes, 2)

        # a choice: Tab to 'causal', Enter
        at_step(student, 2, "The causal mask")
        # the last step's words leave the live region (a reader moving through the page met them there, hidden)
        student.wait_for_function(STALE_GONE, arg="Your answer is in: 'dog'", timeout=20_000, polling=200)
        tab_to(student, lambda f: f["role"] == "radio")
        arrow_to(student, "B. causal")  # lettered as the projector lists the options
        student.keyboard.press("Enter")
        heard(student, "Your answer is in: B. causal")
        tab_to(notes, button("Reveal"))
        notes.keyboard.press("Enter")
        heard(student, "Revealed")
        next_on_notes(notes, 3)

        # a number: Tab to the box, type it, Enter
        at_step(student, 3, "A wide head")
        tab_to(student, lambda f: f["tag"] == "INPUT" and f["name"].startswith("Your answer"))
        student.keyboard.type("256")
        student.keyboard.press("Enter")
        heard(student, "Your answer is in: 256")
        said = student.evaluate("() => window.__heard")
        assert not [t for t in said if t.count("Your answer is in: 256") > 1], said  # once, not once per run


# the focused element (inside a shadow root too), and the box that shows its focus: for an input the box around it (a
# checkbox's label, a select box, a text box), for a slider's hidden input its thumb; clipped to the window. Read after
# two frames: a control may scroll itself into view once it has the focus (the data grid does, a frame later)
STOP = """async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e || e === document.body) return null;
  window.__stop = e;
  let v = (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') && e.closest(
    'label, [data-baseweb="select"] > div, [data-baseweb="input"], [data-baseweb="textarea"]') || e;
  if (e.type === 'range') v = e.closest('[data-rac]') || v;
  while (v && !v.getBoundingClientRect().width) v = v.parentElement;  // a data grid's cell: the grid
  const b = (v || e).getBoundingClientRect();
  const x0 = Math.max(b.left - 8, 0), y0 = Math.max(b.top - 8, 0);
  const x1 = Math.min(b.right + 8, innerWidth), y1 = Math.min(b.bottom + 8, innerHeight);
  return {what: `${e.tagName} ${(e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 40)}`,
          skip: e.getAttribute('data-testid') === 'stSkipToContent',
          clip: {x: x0, y: y0, width: x1 - x0, height: y1 - y0}, ring: 2 * (b.width + b.height)};
}"""
# JS: the focus taken away, onto an element of the test's own off the screen (a blur alone is not enough: the data
# grid takes the focus back when it goes nowhere), two frames later
ELSEWHERE = """async () => {
  let away = document.getElementById('test-focus-away');
  if (!away) {
    away = document.createElement('span');
    away.id = 'test-focus-away';
    away.tabIndex = -1;
    away.style.cssText = 'position:fixed;left:-100px;top:0;width:1px;height:1px';
    document.body.appendChild(away);
  }
  away.focus();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""
PAGES_OF_CONTROLS = ["", "attention_layer", "lecture"]  # the sidebar's, heatmaps; pills, sliders; a table, uploads


def pixels(page, clip: dict) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")).astype(int)


def test_every_stop_of_tab_shows_a_ring_and_tab_comes_back_round(server):
    """On the explorer (the sidebar's controls, heatmaps), Attention as a layer (pills, sliders) and the Lecture page (a
    table, a file upload, an expander), Tab from the top visits every control and comes back to the skip link (no
    trap); at each stop the area around the control changes by at least a ring's worth of pixels from the same area
    with the focus taken away (a one-pixel line around it)."""
    faint, stuck = [], []
    with chromium_page(1366, 768) as page:
        # Streamlit fades some controls in when they get the focus (a heading's link): with motion reduced the page is
        # at once as it ends, so one look at each stop is a fair one (ui/accessibility.py stops transitions)
        page.emulate_media(reduced_motion="reduce")
        for path in through_the_menu(page, server, PAGES_OF_CONTROLS):
            wait_until_settled(page, quiet_ms=500)
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            for presses in range(250):
                page.keyboard.press("Tab")
                stop = page.evaluate(STOP)
                if stop is None:
                    continue  # the browser's own bar, between the page's last stop and its first
                if stop["skip"] and presses > 0:
                    break  # round again
                if stop["clip"]["width"] < 2 or stop["clip"]["height"] < 2:
                    faint.append(f"/{path}: {stop['what']}: not on the screen while focused")
                    continue
                focused = pixels(page, stop["clip"])
                if presses == 12:
                    page.screenshot(path=str(ARTIFACTS / f"keyboard_focus_{path or 'explorer'}.png"))
                page.evaluate(ELSEWHERE)
                plain = pixels(page, stop["clip"])
                page.evaluate("() => window.__stop.focus()")  # and on from there
                changed = int((np.abs(focused - plain).sum(axis=2) > 60).sum()) if focused.shape == plain.shape else 0
                if changed < stop["ring"]:
                    faint.append(f"/{path}: {stop['what']}: {changed} pixels change with focus, a ring is {stop['ring']:.0f}")
            else:
                stuck.append(f"/{path}: 250 presses of Tab never came back to the skip link")
        page.emulate_media(reduced_motion="no-preference")  # the shared tab as it was
    assert not faint and not stuck, "\n".join(stuck + faint)
