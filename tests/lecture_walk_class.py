"""What the class sees of a lecture step in a real browser, read by the lecture walk
(tests/browser/test_browser_lecture_walk.py): a student's phone before Reveal gives nothing away, a student answers,
and at Reveal every view says the right answer the tests compute (tests/lecture_truth.py), marks it, counts the class,
and a phone is brought to the figure that answers the question. Each check returns what is wrong ([] when nothing),
each line starting with `where`."""

from __future__ import annotations

import contextlib
import re
from urllib.parse import parse_qsl, urlsplit

from browser_helpers import ROOT, wait_for_text
from lecture_truth import Truth
from lecture_walk_reads import CLASS_ANSWERS, FOLLOWER_DRAWN, IN_VIEW, STUDENT_VIEW
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attnviz.lecture.kinds.base import letter

ARTIFACTS = ROOT / "test-artifacts"


def phone_drawn(page, bar: str, where: str, name: str) -> None:
    """Until a follower's page shows `bar` ("Step k of N") drawn: no run going, every heatmap and chart drawn, quiet
    (the room's link draws the room's step as the room moves); else a screenshot `name` and a failure."""
    try:
        page.wait_for_function(FOLLOWER_DRAWN, arg=bar, timeout=180_000, polling=100)
    except PlaywrightTimeout:
        page.screenshot(path=str(ARTIFACTS / f"lecture_walk_{name}_stuck.png"))
        text = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')?.innerText.slice(0, 200)")
        raise AssertionError(f"{where}: {bar} was not drawn: {text!r}") from None


def words(markdown: str, n: int = 8) -> str:
    """The first n words of a plan's text, as a page shows them (no markdown marks)."""
    return " ".join(re.sub(r"[*_`#>\[\]]", "", markdown).split()[:n])


def student_view_problems(page, step, room: str, key: str, t: Truth | None, where: str) -> list[str]:
    """What a student's phone gives away before Reveal: an address other than the room's link (a step's setting, the
    key), the presenter key in any link or text (hidden text too), the step's notes or explanation, a right-answer mark
    or a computed answer, and on a predict-first step any figure."""
    seen = page.evaluate(STUDENT_VIEW)
    problems = []
    if parse_qsl(urlsplit(seen["href"]).query) != [("room", room)]:
        problems.append(f"{where}: its address is not the room's link: {seen['href']}")
    problems += [f"{where}: the presenter key in {place}" for place, text in
                 [("its text", seen["text"]), *(("a link", link) for link in seen["links"])] if key in text]
    for field in ("notes", "explain"):
        said = words(getattr(step, field))
        if said and said in seen["text"]:
            problems.append(f"{where}: the step's {field} on the page: {said!r}")
    marks = [m for m in ("✓", "right answer", "Right answer") if m in seen["text"]]
    # a choice's right answer is one of the options on the screen; a token's or a computed number's is not
    # a token's or a number's right answer ("'animal' (token 2), 0.68", "509.1"): not a choice's (one of the options
    # on the screen), not a short one ("2" is everywhere), not one the question or the step's settings say themselves
    # (d_k = 512: the variance it asks for is d_k)
    value = t.said.split(" ±")[0] if t is not None and step.answer.kind != "choice" else ""
    said = [step.question, *(v for _, v in step.state)]
    if len(value) > 2 and value in seen["text"] and not any(value in s for s in said):
        marks.append(value)
    if marks:
        problems.append(f"{where}: the answer shows before Reveal: {marks}")
    if step.predict_first and seen["figures"]:
        problems.append(f"{where}: {seen['figures']} figures before Reveal on a predict-first step")
    return problems


def answer(page, step, value: int | str) -> None:
    """A follower's answer (a pick's index, or a number), until it is confirmed."""
    box = page.locator(".st-key-lecture_answer")
    if step.answer.kind == "number":
        field = box.get_by_label("Your answer (a number)")
        field.fill(str(value))
        field.press("Enter")
    else:
        box.get_by_role("radio").nth(value).click()
    wait_for_text(page, "Your answer is in", where=".st-key-lecture_answer", timeout_ms=60_000)


def answers_problems(page, step, t: Truth, where: str) -> list[str]:
    """At Reveal, with two answers in, one right: the right answer said (the tests' own), marked where the class's
    answers are drawn (a projector's table beside the figure: the right row "✓ right"; a chart, on a phone or under a
    figure that fills the projector's screen: the right bar hatched and "✓ right"; a number's histogram: a dashed line
    at the right number), and the two answers counted."""
    seen = page.evaluate(CLASS_ANSWERS)
    if seen is None:
        return [f"{where}: no class's answers"]
    kind, text, plots = step.answer.kind, seen["text"], seen["plots"]
    wanted = {"token": [f"The right answer: {t.said}, the largest weight of ", f" in the model ({t.what}); 1 of 2 "
                        "picked it.", "(2 answers)"],
              "choice": [f"The right answer: {t.said} (marked in the plan); 1 of 2 answers picked it."],
              "number": [f"The right answer: {t.said} (", "; 1 of 2 answers " +
                         ("within it." if getattr(step.answer, "tolerance", 0) else "gave it.")]}[kind]
    problems = [f"{where}: {w!r} is not said: {text[:400]!r}" for w in wanted if w not in text]
    if kind == "choice" and seen["tally"]:  # the projector's table: the right row marked "✓ right", counted 1 of 2
        right = [row for row, marked in seen["tally"] if marked]
        if "(2 answers)" not in seen["tallyCaption"] or right != [f"{letter(t.right)}. {t.said} ✓ right 1"]:
            problems.append(f"{where}: the table does not mark the right answer, counted 1 of 2: {seen}")
    elif kind == "choice":  # the right bar hatched and "✓ right"
        bars = [b for p in plots for b in p["bars"]]
        hatched = len(bars) == 1 and [s == "/" for s in bars[0]["hatch"]] == [i == t.right
                                                                              for i in range(len(bars[0]["x"]))]
        if not (hatched and bars[0]["text"][t.right] == "1 ✓ right" and any("(2)" in p["title"] for p in plots)
                and any("1 ✓ right" in w for p in plots for w in p["words"])):
            problems.append(f"{where}: no chart marks the right answer hatched and '✓ right', 1 of 2: {plots}")
    elif kind == "number":  # the histogram's dashed line at the right number, said in its title (or, on a projector,
        # in the words above it) with the class's count
        value = float(t.right)
        words = " ".join([text, *(p["title"] for p in plots)])
        if not (f"✓ right answer, {value:.4g}" in words and "(2)" in words
                and any(abs(x - value) <= 1e-6 * max(1, abs(value)) for p in plots for x in p["dashed"])):
            problems.append(f"{where}: no dashed line marks the right answer {value:.4g}, of 2 answers: {seen}")
        if "The class:" in text and "The class: 2 answers, 1 right." not in text:  # the projector's words under it
            problems.append(f"{where}: the count is not '2 answers, 1 right': {text[:300]!r}")
    return problems


def question_in_view(page, where: str) -> list[str]:
    """Before Reveal a student's phone shows the question's answer box on its screen (a phone that followed from a
    revealed step, brought down to its figure, is not left there)."""
    box = page.evaluate("""() => { const b = document.querySelector('.st-key-lecture_answer');
      const r = b && b.getBoundingClientRect(); return r ? [r.top, r.bottom, window.innerHeight] : null; }""")
    if box is None or not 0 <= box[0] < box[2] - 60:
        return [f"{where}: the answer box is not on the phone's screen (top, bottom, screen): {box}"]
    cut = page.evaluate(OPTIONS_CUT)
    return [f"{where}: a choice reads cut short on the phone ('…'): {cut}"] if cut else []


# JS: the answer box's options whose words do not fit their pill (Streamlit cuts a pill's label to one line, "…")
OPTIONS_CUT = """() => [...document.querySelectorAll('.st-key-lecture_answer [data-testid="stButtonGroup"] button')]
  .filter(b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
  .map(b => b.innerText.trim())"""


def figure_in_view(page, focus: str, where: str) -> list[str]:
    """At Reveal a phone is brought to the step's focus figure: it starts in the top half of the phone's screen, below
    Streamlit's header."""
    with contextlib.suppress(PlaywrightTimeout):  # its hold over: the figures around it drawn
        page.wait_for_function("(id) => (window.__attnvizFocus || {})[id] === 'done'", arg=focus, timeout=20_000,
                               polling=100)
    seen = page.evaluate(IN_VIEW, focus)
    if seen["top"] is None or not seen["height"] or not seen["header"] - 1 <= seen["top"] < seen["screen"] / 2:
        return [f"{where}: the focus figure {focus!r} is not brought into the phone's screen: {seen}"]
    return []


def verdict_in_view(page, where: str) -> list[str]:
    """At Reveal a phone shows its student's own answer, right or not, on the screen it is brought to (the class's
    chart under a tall figure had put it 1,100 to 2,100 px down)."""
    seen = page.evaluate("""() => { const b = document.querySelector('.st-key-lecture_mine');
      const h = document.querySelector('[data-testid="stHeader"]'), r = b && b.getBoundingClientRect();
      return r ? {text: b.innerText, top: r.top, bottom: r.bottom, screen: window.innerHeight,
                  header: h ? h.getBoundingClientRect().bottom : 0} : null; }""")
    if seen is None or "Your answer:" not in seen["text"]:
        return [f"{where}: the phone does not say what its student answered: {seen}"]
    if not (seen["header"] - 1 <= seen["top"] and seen["bottom"] <= seen["screen"]):
        return [f"{where}: the student's own answer is not on the phone's screen: {seen}"]
    return []

