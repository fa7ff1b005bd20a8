"""Every step of every shipped lecture plan, walked once as a class runs it: the lecturer starts the plan's room on the
Lecture page and walks it on a 1024×768 projector (?present=1): step 1 opened from its link, each later one with → (the
bar's Next, a page load of that step's own link); a student's phone (390×844) follows the room's link the whole
lecture and answers each question rightly, a second student's phone opens the same link for each question and answers
it another way; the presenter notes are opened on the plan's first step and its first question. On every step:
- the projector, once drawn (and revealed, where it asks first): its focus figure inside the first screen, with its
  heatmaps' token labels and titles, and on a question the class's answers beside it (their chart, or their
  heatmap's labels); every figure's text at least 20 px; nothing clipped (a table of up to 16 rows scrolls not, no
  heatmap title cut, no chart title under a toolbar); no exception; the presenter key not in its address;
- before Reveal, the question in type of at least 32 px with a choice's options lettered, on the screen; each phone
  shows no answer: its address is the room's follow link (no step setting, no key), and nothing on it (its text,
  hidden too, and its links) holds the presenter key, the step's notes or explanation, a right-answer mark or the
  computed answer; on a predict-first step no figure; its answer box is on its screen (a phone that followed on from a
  revealed step, brought down to that step's figure, is back at its top);
- at Reveal, the projector and the phone say the right answer the tests compute with the engine alone for the step's
  state (tests/lecture_truth.py: a token question's row, a computed number) or the plan marks, mark it ("✓" in the
  projector's tally, the phone's bar hatched and "✓ right", the dashed line), and count both phones' answers (2, one
  right); the phone is brought to the focus figure (inside its screen), with its student's own answer on that screen;
- on a step that asks nothing, the phone opens at its focus figure (inside its screen), as the projector does;
- the lecture bar whole (no "…") and below Streamlit's header, on the projector and on the phone;
- axe-core (tests/axe_check.py) on the projector and the phone at 1366×768 and 390×844, before Reveal (an answer
  given) and after, and on the notes: each view resized, not loaded again, for its other sizes (the projector and the
  phone together).
One server, one Chromium; each step is loaded once by the projector and drawn once on the phone. Screenshots:
test-artifacts/lecture_walk_<plan>_<k>[_asked][_phone].png."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import browser_helpers
import pytest
from apptest_helpers import app_menu
from axe_check import AxeLog
from axe_walks import faults_met_nowhere
from browser_helpers import (
    IDLE,
    ROOT,
    exceptions_on,
    people_browser,
    resized,
    resized_together,
    start_the_room,
    wait_for_text,
)
from lecture_truth import Truth, truth
from lecture_walk_class import (
    answer,
    answers_problems,
    figure_in_view,
    phone_drawn,
    question_in_view,
    student_view_problems,
    verdict_in_view,
)
from lecture_walk_projector import bar_problems, question_problems, step_problems, stuck
from lecture_walk_reads import CLIPPED, SETTLED
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attnviz.lecture import load_plan, step_link
from attnviz.paths import LECTURES

ARTIFACTS = ROOT / "test-artifacts"
PLANS = {path.stem: load_plan(path, {p: t for _, p, t in app_menu()})
         for path in sorted(LECTURES.glob("*.toml"))}
WIDTH, HEIGHT = 1024, 768  # the projector
DESK, PHONE = (1366, 768), (390, 844)  # axe's two sizes; a student's phone
pytestmark = pytest.mark.browser
MET: dict[str, int] = {}  # the listed faults the plans' walks met (upstream issue -> elements)
PASSED: list[str] = []  # the plans whose walks ran to their end in this process


@pytest.fixture(scope="module")
def projector(server):
    """The browser modules' shared tab (tests/browser/conftest.py) for the whole walk, emptied at its end: a new tab
    starts a cold renderer with an empty cache."""
    shared = browser_helpers.worker_chromium
    try:
        yield shared.tab(WIDTH, HEIGHT)
    finally:
        shared.empty_tab()


@dataclass(frozen=True)
class Room:
    code: str
    key: str  # the presenter key
    notes: str  # the presenter notes' link
    follow: str  # the students' link


def start_room(page, server: str, plan_id: str) -> Room:
    """The lecturer starts the plan's room on the Lecture page, in the projector's browser."""
    page.goto(f"{server}/lecture?lecture={plan_id}")
    wait_for_text(page, "Lecture mode", timeout_ms=120_000)
    page.wait_for_function(IDLE, timeout=120_000, polling=100)
    link = start_the_room(page)
    query = dict(parse_qsl(urlsplit(link.get_attribute("href")).query))
    notes = page.locator('[data-testid="stMain"] a[href*="lecture_notes?room="]').first.get_attribute("href")
    code = wait_for_text(page, "/follow?room=").split("/follow?room=", 1)[1].split()[0]
    assert code == query["room"], (code, query)
    return Room(code, query["key"], f"{server}/{notes[2:]}", f"{server}/follow?room={code}")


def asks_first(step) -> bool:
    """A step whose Reveal the lecturer presses: it hides its figures, or takes the class's answers."""
    return step.predict_first or step.answer is not None


def where_of(plan_id: str, number: int, who: str) -> str:
    return f"{plan_id} step {number} (/{PLANS[plan_id].step(number).page}), {who}"


def next_step(page, server: str, plan_id: str, number: int, room: Room) -> None:
    """→ on the projector (what a clicker sends: the bar's Next) loads exactly step `number`'s own link."""
    link = server + "/" + step_link(PLANS[plan_id].step(number), lecture=plan_id, number=number, room=room.code)[2:]
    try:
        # the address loaded, as the browser asked for it (the page then drops from its address bar what equals a
        # default, so location.href is not that address)
        with page.expect_request(lambda r: r.is_navigation_request() and r.frame == page.main_frame,
                                 timeout=60_000) as loaded:
            page.keyboard.press("ArrowRight")
        page.wait_for_function("(k) => new URLSearchParams(location.search).get('step') === k",
                               arg=str(number), timeout=60_000, polling=100)
    except PlaywrightTimeout:
        raise AssertionError(f"{plan_id}: → on step {number - 1} did not open step {number}") from None
    opened = loaded.value.url
    assert same_address(opened, link), f"{plan_id} step {number}: → loaded {opened}, its link is {link}"


def same_address(a: str, b: str) -> bool:
    """Two addresses for the same view: one path, and the same query pairs in the same order (the browser may spell a
    character another way than Python's quoting)."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.netloc, pa.path.rstrip("/"), parse_qsl(pa.query, keep_blank_values=True)) == \
        (pb.netloc, pb.path.rstrip("/"), parse_qsl(pb.query, keep_blank_values=True))


def reveal(page) -> None:
    """Click Reveal once the question's run is over (a click during a run can be lost with it), until it is gone."""
    button = page.locator(".st-key-lecture_reveal").get_by_role("button", name="Reveal")  # the one shown
    for _ in range(3):
        page.wait_for_function(IDLE, timeout=240_000, polling=100)
        if not button.count():
            return  # the click before was taken after all, after its run
        button.first.click(timeout=30_000)
        try:
            # the question stays on the page until the revealed run ends (Streamlit drops an element the new run did
            # not draw only then): a cold first run of a page on a busy machine can take minutes
            page.wait_for_function("() => !document.querySelector('.st-key-lecture_reveal')", timeout=240_000,
                                   polling=100)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError("Reveal did not reveal the figures")


def settled(page, plan_id: str, number: int) -> None:
    """Until the projector's step is drawn: every heatmap and chart, the run over, its focus figure brought up."""
    plan, step = PLANS[plan_id], PLANS[plan_id].step(number)
    page.evaluate("() => { window.__walkSettled = null; }")
    try:
        page.wait_for_function(SETTLED, arg=[number, len(plan.steps), step.focus, asks_first(step)], timeout=240_000,
                               polling=50)
    except PlaywrightTimeout:
        raise stuck(page, f"{plan_id}_{number}", where_of(plan_id, number, "projector")) from None


def axe_both(log: AxeLog, page, where: str) -> None:
    """axe at the page's size now (one of the two), then resized to the other (a resize, not a new load)."""
    now = (page.viewport_size["width"], page.viewport_size["height"])
    for size in (now, PHONE if now == DESK else DESK):
        resized(page, *size)
        log.check(page, f"{where} at {size[0]}×{size[1]}")


class Walk:
    """One plan's walk: its room, the projector (the worker's shared tab), the two students' phones (a context each:
    own cookies, own student), axe's log, and what is wrong so far."""

    def __init__(self, server: str, plan_id: str, projector, browser):
        self.plan_id, self.plan, self.projector, self.browser = plan_id, PLANS[plan_id], projector, browser
        self.log, self.problems, self.noted = AxeLog(), [], False
        self.room = start_room(projector, server, plan_id)
        self.phone, self.other = (browser.new_context(viewport=dict(zip(("width", "height"), PHONE, strict=True)),
                                                      is_mobile=True, has_touch=True).new_page() for _ in range(2))

    def where(self, number: int, who: str) -> str:
        return where_of(self.plan_id, number, who)

    def bar(self, number: int) -> str:
        return f"Step {number} of {len(self.plan.steps)}"

    def shot(self, page, name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"lecture_walk_{self.plan_id}_{name}.png"))

    def phone_drawn(self, page, number: int, who: str) -> None:
        phone_drawn(page, self.bar(number), self.where(number, who), f"{self.plan_id}_{number}_{who.split()[-1]}")

    def second_student(self, number: int, t: Truth) -> None:
        """The second student opens the room's link on this question, looks, answers another way, and leaves."""
        page, step = self.other, self.plan.step(number)
        page.goto(self.room.follow)
        self.phone_drawn(page, number, "the second phone")
        page.locator(".st-key-lecture_answer").wait_for(timeout=60_000)
        self.problems += student_view_problems(page, step, self.room.code, self.room.key, t,
                                               self.where(number, "the second phone before Reveal"))
        answer(page, step, t.wrong)
        page.goto("about:blank")  # its session ends

    def notes(self, number: int, t: Truth | None) -> None:
        """The presenter notes (a phone of the lecturer's) on this step: the right answer, and axe at both sizes; closed
        after (the notes follow the room: a page drawn again at every step of the walk)."""
        context = self.browser.new_context(viewport=dict(zip(("width", "height"), PHONE, strict=True)))
        try:
            notes = context.new_page()
            notes.goto(self.room.notes)
            self.phone_drawn(notes, number, "the notes")
            if t is not None:
                said = t.said.replace("), ", "), weight ") if self.plan.step(number).answer.kind == "token" else t.said
                if f"Right answer: {said}" not in notes.inner_text('[data-testid="stMain"]'):
                    self.problems.append(f"{self.where(number, 'notes')}: 'Right answer: {said}' is not said")
            axe_both(self.log, notes, self.where(number, "notes"))
        finally:
            context.close()

    def axe_views(self, number: int, state: str) -> None:
        """axe on the projector and the phone at 1366×768, then at 390×844: both resized together (each its own
        renderer: they lay themselves out side by side, and the waits overlap); both are left at a phone's size."""
        for size in (DESK, PHONE):
            resized_together([self.projector, self.phone], *size)
            for page, who in ((self.projector, "projector"), (self.phone, "phone")):
                self.log.check(page, f"{self.where(number, who + state)} at {size[0]}×{size[1]}")

    def phone_now(self, number: int) -> None:
        """The phone's bar whole, no exception, its screenshot."""
        where = self.where(number, "phone")
        self.problems += bar_problems(self.phone, where)
        self.problems += [f"{where}: exception {e[:200]}" for e in exceptions_on(self.phone)]
        self.shot(self.phone, f"{number}_phone")

    def asked(self, number: int, t: Truth | None) -> None:
        """Before Reveal: the projector's question, the phones giving nothing away, both students' answers counted,
        axe on the projector and the phone (and the notes, on the plan's first question), then Reveal."""
        step, projector, phone = self.plan.step(number), self.projector, self.phone
        self.problems += question_problems(projector, step, self.bar(number),
                                           self.where(number, "projector before Reveal"), f"{self.plan_id}_{number}")
        self.problems += student_view_problems(phone, step, self.room.code, self.room.key, t,
                                               self.where(number, "phone before Reveal"))
        if step.answer:
            self.problems += question_in_view(phone, self.where(number, "phone before Reveal"))
            answer(phone, step, t.right)
            self.second_student(number, t)
            wait_for_text(projector, "2 answers so far", timeout_ms=60_000)
        self.problems += bar_problems(projector, self.where(number, "projector before Reveal"))
        self.shot(projector, f"{number}_asked")
        self.shot(phone, f"{number}_asked_phone")
        self.axe_views(number, " before Reveal")
        if not self.noted:
            self.notes(number, t)
            self.noted = True
        projector.set_viewport_size({"width": WIDTH, "height": HEIGHT})  # the projector's own size for Reveal
        projector.wait_for_timeout(300)  # laid out for it (its header's menu need not have settled)
        projector.wait_for_function(IDLE, timeout=60_000, polling=100)
        reveal(projector)

    def revealed(self, number: int, t: Truth | None) -> None:
        """After Reveal: the class's answers on the projector and the phone, the phone brought to the figure."""
        step, phone = self.plan.step(number), self.phone
        if t is not None:
            self.problems += answers_problems(self.projector, step, t, self.where(number, "projector at Reveal"))
        phone.wait_for_function("() => !document.querySelector('.st-key-lecture_question')", timeout=180_000,
                                polling=100)
        self.phone_drawn(phone, number, "phone at Reveal")
        self.problems += figure_in_view(phone, step.focus, self.where(number, "phone at Reveal"))
        if t is not None:
            self.problems += answers_problems(phone, step, t, self.where(number, "phone at Reveal"))
            self.problems += verdict_in_view(phone, self.where(number, "phone at Reveal"))


@pytest.mark.timeout(2400)  # a quiet machine: about 10 s a step
@pytest.mark.parametrize("plan_id", list(PLANS))
def test_every_step_of_the_plan_as_the_projector_two_phones_and_the_notes(server, projector, plan_id):
    with people_browser() as browser:
        walk = Walk(server, plan_id, projector, browser)
        plan, room = walk.plan, walk.room
        projector.goto(server + "/" + step_link(plan.step(1), lecture=plan_id, number=1, room=room.code,
                                                key=room.key)[2:])
        walk.phone.goto(room.follow)
        for number in range(1, len(plan.steps) + 1):
            step = plan.step(number)
            t = truth(step) if step.answer else None
            if number > 1:
                projector.set_viewport_size({"width": WIDTH, "height": HEIGHT})  # back from axe's sizes, no wait
                next_step(projector, server, plan_id, number, room)
            walk.phone_drawn(walk.phone, number, "phone")
            if asks_first(step):
                walk.asked(number, t)
            elif number == 1:
                walk.notes(number, t)
            settled(projector, plan_id, number)
            state = ", revealed" if asks_first(step) else ""
            walk.problems += step_problems(projector, step, where_of(plan_id, number, "projector" + state))
            walk.shot(projector, f"{number}")
            if asks_first(step):
                walk.revealed(number, t)
            elif step.focus:  # a step that asks nothing: the phone opens at the figure the projector shows
                walk.problems += figure_in_view(walk.phone, step.focus, walk.where(number, "phone"))
            walk.phone_now(number)
            walk.axe_views(number, state)
    projector.set_viewport_size({"width": WIDTH, "height": HEIGHT})  # the module's tab as the next test expects it
    for upstream, count in walk.log.seen.items():
        MET[upstream] = MET.get(upstream, 0) + count
    PASSED.append(plan_id)
    report = walk.problems + ([walk.log.report()] if walk.log.problems else [])
    assert not report, "\n".join(report)


def test_every_listed_fault_is_still_met(axe_run_folder):
    """Each fault the accessibility statement lists (docs/accessibility_faults.toml) was met by the plans' walks above
    or the walk over every page (tests/browser/test_browser.py): one that is gone (fixed upstream, or the app no longer
    shows it) is taken off the list and the statement. Asked only after every plan's walk met its end in this process
    (a walk that failed or was not selected says nothing of the rest); concluded here or by the walk over every page,
    whichever ends last (tests/axe_walks.py)."""
    if len(PASSED) < len(PLANS):
        pytest.skip(f"{len(PLANS) - len(PASSED)} of the {len(PLANS)} plans' walks did not run to their end here: "
                    "nothing to conclude")
    gone = faults_met_nowhere(axe_run_folder, "plans", MET)
    if gone is None:
        pytest.skip("the walk over every page has not run to its end in this run: it concludes, if it does")
    assert not gone, "listed, but met nowhere: " + "; ".join(gone)


def test_on_a_phone_the_map_fits_its_blocks_open_their_pages_and_no_toolbar_covers_a_title(server, projector):
    """390×844: the Transformer map fits the width, a tap on a block opens its page; Attention as a layer's weights
    chart, tapped (a hover on a phone), shows no toolbar over its title."""
    page = projector
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.goto(f"{server}/transformer_map")
        page.locator(".av-tmap svg").wait_for(timeout=120_000)
        widths = page.evaluate("""() => ({svg: document.querySelector('.av-tmap svg').getBoundingClientRect().right,
          page: document.scrollingElement.scrollWidth})""")
        assert widths["svg"] <= 390 and widths["page"] <= 390, widths
        page.screenshot(path=str(ARTIFACTS / "lecture_walk_map_phone.png"))
        page.locator('.av-tmap a[data-block="dec_self"]').click()
        page.wait_for_url("**/masks_lab?fig=causal_card", timeout=60_000)
        wait_for_text(page, "Masks lab", timeout_ms=120_000)
        assert not exceptions_on(page)

        page.goto(f"{server}/attention_layer?al_step=b")
        chart = page.locator('.st-key-figure_pictures [data-testid="stPlotlyChart"] .main-svg').first
        chart.wait_for(timeout=120_000)
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)  # a tap is a hover: where a toolbar would show
        page.wait_for_timeout(500)
        assert page.evaluate("() => document.querySelectorAll('.js-plotly-plot .modebar-btn').length") == 0
        assert not [c for c in page.evaluate(CLIPPED) if "toolbar" in c]
        page.screenshot(path=str(ARTIFACTS / "lecture_walk_attention_layer_phone.png"))
    finally:
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})


def test_the_lecture_pages_previous_and_next_are_whole_at_1024(server, projector):
    """The Lecture page on a 1024 px screen: "Previous" and "Next" read whole, not "P…" and "N…"."""
    page = projector
    page.goto(f"{server}/lecture?present=1")
    wait_for_text(page, "Step 1 of 15", timeout_ms=120_000)
    cut = []
    for name in ("Previous", "Next"):
        button = page.get_by_role("button", name=name, exact=True)
        button.wait_for(timeout=60_000)
        cut.append(button.evaluate("""(b) => { const t = b.querySelector('p') || b;
          return [t.innerText, t.scrollWidth > t.clientWidth + 1]; }"""))
    page.screenshot(path=str(ARTIFACTS / "lecture_walk_lecture_page_1024.png"))
    assert cut == [["Previous", False], ["Next", False]], cut

