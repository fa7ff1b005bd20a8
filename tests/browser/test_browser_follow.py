"""A participatory lecture in real Chromium on one `streamlit run app.py` (the memory store): the lecturer uploads a
plan and starts a room; a projector (1024×768, present) and three students on phones (390×844), each in a browser
context of its own (own cookies: own anonymous session), follow it. The gate holds for followers until Reveal;
answers from the three are counted once each (one changes its answer) and drawn at Reveal beside the model's row;
Next on the presenter notes moves the projector and every follower; a follower breaks away and comes back; a wrong
presenter key changes nothing; the follow QR code decodes to the room's follow link, and the page says that the
address is loopback. Screenshots in test-artifacts/follow_*.png."""

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from browser_helpers import (
    ROOT,
    chromium_page,
    exceptions_on,
    people_browser,
    start_the_room,
    streamlit_server,
    wait_for_app_idle,
    wait_for_text,
)
from playwright.sync_api import Error as PlaywrightError
from test_browser_lecture import decode_qr

from attnviz.lecture import is_loopback
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID
from ui.lecture.keypad import NUMBER_PATTERN

ARTIFACTS = ROOT / "test-artifacts"
PLAN = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
UPLOAD = '[data-testid="stFileUploaderDropzoneInput"]'
STUDENTS = 3
pytestmark = pytest.mark.browser

NO_FIGURES = "() => Object.keys(window.attnvizHeatmaps || {}).length === 0 && !document.querySelector('.js-plotly-plot')"
CLASS_ROW = "() => !!(window.attnvizHeatmaps && window.attnvizHeatmaps['lecture_class_row']?.drawn)"
# the projector's table of the class's answers: each row's first cell -> its second (the class's count)
CLASS_COUNTS = """() => Object.fromEntries([...document.querySelectorAll('.st-key-lecture_class table.tally tr')]
  .slice(1).map(r => [r.cells[0].innerText.replace(/\\s+/g, ' ').trim(), r.cells[1].innerText.trim()]))"""
NO_SIDEWAYS = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
# the answer box's top, from the top of the page (not of the scrolled view): on a phone, inside the first screen
ANSWER_TOP = ("() => document.querySelector('.st-key-lecture_answer').getBoundingClientRect().top"
              " + (document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || 0) + window.scrollY")
# how far the page is scrolled (Streamlit scrolls its main area, not the window)
SCROLLED = ("() => Math.round((document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || 0)"
            " + window.scrollY)")
TITLE_TOP = "() => document.querySelector('[data-testid=\"stMain\"] h4').getBoundingClientRect().top"
# the number answer box asks a phone for its decimal keypad (ui/lecture/keypad.py)
KEYPAD = ("() => document.querySelector('.st-key-lecture_answer [data-testid=\"stTextInput\"] input')?.inputMode"
          " === 'decimal'")


# the sidebar's width on screen, and whether something lies over the bar's "Explore this view" (or its closed label)
EXPLORE_COVERED = """() => { const side = document.querySelector('[data-testid="stSidebar"]');
  const e = document.querySelector('.attnviz-lecture-explore, .attnviz-lecture-none'), r = e && e.getBoundingClientRect();
  const top = r && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {sidebar: side ? Math.round(side.getBoundingClientRect().width) : 0, covered: e ? !e.contains(top) : null}; }"""


def start_room(page, server, passphrase: str = "") -> tuple[str, str, str]:
    """Upload the plan, start its room -> (projector link, notes link, follow link) as the Lecture page gives them.
    passphrase: the lecturers' (a server where this browser is not on the server's machine: the class server's)."""
    page.goto(f"{server}/lecture")
    wait_for_text(page, "Lecture mode")
    wait_for_app_idle(page)
    if passphrase:
        box = page.get_by_label("Lecturers' passphrase", exact=True).first
        box.fill(passphrase)
        box.press("Enter")
        page.get_by_text("Use your own plan").wait_for(timeout=60_000)
        wait_for_app_idle(page)
    page.get_by_text("Use your own plan").click()
    page.locator(UPLOAD).set_input_files(str(PLAN))
    wait_for_text(page, "The class answers", "Step 1 of 3: Where does 'ran' look?")
    wait_for_app_idle(page)
    projector = start_the_room(page)
    notes = page.locator('[data-testid="stMain"] a[href*="lecture_notes?room="]').first.get_attribute("href")
    follow = wait_for_text(page, "/follow?room=").split("/follow?room=", 1)[1].split()[0]
    return projector.get_attribute("href"), notes, f"{server}/follow?room={follow}"  # the room's code


def pill(page, token: str):
    """The answer box's button for this token."""
    return page.locator(".st-key-lecture_answer button").filter(has_text=re.compile(f"^{re.escape(token)}$"))


def follower_at(page, step: int, title: str) -> None:
    """Until the page shows step `step` (a follower on the follow link, which draws the room's step as the room moves;
    the projector on the step's own page), drawn."""
    wait_for_text(page, f"Step {step} of 3", title, timeout_ms=60_000)
    wait_for_app_idle(page)


def test_a_class_follows_answers_and_sees_itself_beside_the_model(server):
    # the lecturer in the worker's tab; everyone else in a browser context of their own (own cookies)
    with people_browser() as browser, chromium_page(1280, 900) as lecturer:
        projector_link, notes_link, follow_link = start_room(lecturer, server)
        code = dict(parse_qsl(urlsplit(follow_link).query))["room"]
        key = dict(parse_qsl(urlsplit(projector_link).query))["key"]
        assert key not in follow_link and f"room={code}&key={key}" in notes_link
        assert "is this computer's own" in lecturer.inner_text('[data-testid="stMain"]')  # loopback, said
        lecturer.screenshot(path=str(ARTIFACTS / "follow_lecture_page.png"), full_page=True)

        projector = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()
        projector.goto(f"{server}/{projector_link[2:]}")
        wait_for_text(projector, "Step 1 of 3", "Predict first.", "0 answers so far")
        wait_for_app_idle(projector)
        assert projector.evaluate(NO_FIGURES)

        students = [browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                        has_touch=True).new_page() for _ in range(STUDENTS)]
        for student in students:
            student.goto(follow_link)
            follower_at(student, 1, "Where does 'ran' look?")
            assert student.url == follow_link  # the step comes to the follow link: no key, no presentation mode
            assert student.evaluate(NO_FIGURES), "a follower's figures before Reveal"
            assert student.evaluate(NO_SIDEWAYS)
            top = student.evaluate(ANSWER_TOP)
            assert top < 844 - 60, f"the answer box starts {top:.0f} px down a 844 px phone"  # and its first row
            assert top < student.evaluate(TITLE_TOP), "the question comes before the page's title"
            # "By keyboard: Tab to the options, …" is for a screen with keys: a phone's touch screen has no Tab
            assert student.locator(".st-key-lecture_by_keys").count() == 1
            assert not student.locator(".st-key-lecture_by_keys").is_visible()
        # a phone's sidebar (the app's menu) opened, then the page reloaded: Streamlit kept it open, over the step's
        # bar and "Explore this view", until closed; a follower's page load now closes it
        menu = students[1]
        menu.get_by_test_id("stExpandSidebarButton").click()
        menu.wait_for_function(f"() => ({EXPLORE_COVERED})().sidebar > 100", timeout=30_000, polling=100)
        menu.reload()
        follower_at(menu, 1, "Where does 'ran' look?")
        menu.wait_for_function(f"() => ({EXPLORE_COVERED})().sidebar === 0", timeout=30_000, polling=100)
        assert menu.evaluate(EXPLORE_COVERED)["covered"] is False
        students[0].screenshot(path=str(ARTIFACTS / "follow_phone_before_reveal.png"), full_page=True)
        students[0].screenshot(path=str(ARTIFACTS / "follow_phone_first_screen.png"))  # what a student sees

        for student, token in zip(students, ("dog", "dog", "home"), strict=True):
            pill(student, token).click()
            wait_for_text(student, f"Your answer is in: '{token}'")
        pill(students[2], "a").click()
        wait_for_text(students[2], "Your answer is in: 'a'")  # changed: still one answer
        wait_for_text(projector, "3 answers so far", timeout_ms=30_000)  # the count grows live

        notes = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # the lecturer's phone
        notes.goto(f"{server}/{notes_link[2:]}")
        wait_for_text(notes, "Step 1 of 3", "Right answer: 'a' (token 1), weight 0.40", "3 answers (token)",
                      "not revealed yet")
        notes.screenshot(path=str(ARTIFACTS / "follow_notes_phone.png"), full_page=True)

        intruder = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()  # a crafted link
        intruder.goto(f"{server}/{projector_link[2:].replace(key, 'x' * 24).replace('step=1', 'step=2')}")
        wait_for_text(intruder, "presenter key is not room")
        wait_for_app_idle(intruder)
        notes.wait_for_timeout(2_000)
        assert "Step 1 of 3" in notes.inner_text('[data-testid="stMain"]')  # the room did not move
        assert all(s.url == follow_link for s in students)
        intruder.context.close()

        notes.get_by_role("button", name="Reveal").click()
        wait_for_text(notes, "Revealed")
        # beside the figure: the right answer in words, then a key token a row with the class's count and the model's
        # weight (the phones draw the two rows as a heatmap)
        projector.locator(".st-key-lecture_class table.tally").wait_for(timeout=60_000)
        wait_for_text(projector, "The right answer: 'a' (token 1), 0.40", "1 of 3 picked it")
        counts = projector.evaluate(CLASS_COUNTS)
        assert counts["a ✓ right"] == "1" and counts["dog"] == "2" and counts["home"] == "0"  # changed: counted once
        wait_for_app_idle(projector)
        projector.screenshot(path=str(ARTIFACTS / "follow_projector_revealed.png"))
        for student in students:
            student.wait_for_function(CLASS_ROW, timeout=60_000, polling=200)  # the gate opened for followers
            wait_for_app_idle(student)
            assert "answers are closed" not in student.inner_text('[data-testid="stMain"]')  # nobody answered late
            assert student.evaluate(NO_SIDEWAYS)
            # brought to the figure that answers the question (ui/focus.py), at Reveal
            student.wait_for_function("() => (window.__attnvizFocus || {}).pair === 'done'", timeout=30_000,
                                      polling=200)
            assert student.evaluate(SCROLLED) > 100, "the phone stayed at the top at Reveal"
        # the answer box is gone: each phone says what its student answered, and whether it was right
        wait_for_text(students[0], "Your answer: 'dog' (token 2), ✗ not the right answer.")
        wait_for_text(students[2], "Your answer: 'a' (token 1), ✓ right.")
        students[0].screenshot(path=str(ARTIFACTS / "follow_phone_after_reveal.png"), full_page=True)

        notes.get_by_role("button", name="Next").click()  # the phone moves the projector and every follower
        wait_for_text(notes, "Step 2 of 3")
        for page in [projector, *students]:
            follower_at(page, 2, "The causal mask")
        assert all(s.url == follow_link for s in students)  # no page load on a phone: the step came to it
        # the page stayed, the step is new: it opens at its top (its bar and question), not where step 1 was scrolled
        assert [s.evaluate(SCROLLED) for s in students] == [0] * STUDENTS
        assert "/masks_lab?" in projector.url
        # the projector followed as the projector: the presenter key is its browser's, never in its address
        assert "key=" not in projector.url and "present=1" in projector.url
        wait_for_text(projector, "answers so far")
        projector.screenshot(path=str(ARTIFACTS / "follow_projector_step2.png"))
        assert students[0].evaluate(ANSWER_TOP) < 844 - 60  # a page with pickers (masks lab): the box first too
        pill(students[0], "B. causal").click()  # a choice question on a phone: its options lettered as on the projector
        wait_for_text(students[0], "Your answer is in: B. causal")
        assert students[0].evaluate(NO_SIDEWAYS)
        students[0].screenshot(path=str(ARTIFACTS / "follow_phone_choice.png"))
        wait_for_text(projector, "1 answer so far", timeout_ms=30_000)

        png = projector.get_by_role("button", name="Students")
        png.click()
        qr = projector.locator(".st-key-lecture_follow_qr img")
        qr.wait_for(timeout=30_000)
        projector.wait_for_timeout(500)
        assert decode_qr(qr.screenshot()) == follow_link  # the room's link, loopback here, and said so
        assert "is this computer's own" in projector.inner_text('[data-testid="stPopoverBody"]')
        projector.screenshot(path=str(ARTIFACTS / "follow_projector_students_popover.png"))
        projector.keyboard.press("Escape")

        wanderer = students[1]  # breaks away, then comes back: once the step is revealed (its view shows the answer)
        assert wanderer.get_by_role("link", name="Explore this view").count() == 0
        assert "Explore this view after Reveal" in wanderer.inner_text('[data-testid="stMain"]')
        notes.get_by_role("button", name="Reveal").click()
        wait_for_text(notes, "Revealed")
        wanderer.get_by_role("link", name="Explore this view").click(timeout=60_000)
        wait_for_text(wanderer, "Back to following", "Masks lab")
        assert "lecture=" not in wanderer.url and f"room={code}" in wanderer.url
        assert "Step 2 of 3" not in wanderer.inner_text('[data-testid="stMain"]')
        wanderer.get_by_role("link", name="Back to following").click()
        follower_at(wanderer, 2, "The causal mask")

        projector.keyboard.press("ArrowRight")  # the clicker on the projector moves the room too
        for page in [notes, *students]:
            wait_for_text(page, "Step 3 of 3", timeout_ms=60_000)
        number = students[2].get_by_label("Your answer (a number)")  # a number question on a phone
        # a text box (a number box drops a 5,000-digit value without a word) that opens the phone's number keypad
        students[2].wait_for_function(KEYPAD, timeout=10_000, polling=100)
        assert number.evaluate("e => [e.getAttribute('pattern'), e.autocomplete]") == [NUMBER_PATTERN, "off"]
        # the browser compiled the pattern (one it cannot compile is ignored): a number fits it, a word does not
        assert number.evaluate("e => { const fits = v => { e.value = v; return e.validity.valid; };"
                               " const got = [fits('0,25'), fits('-1.5e3'), fits('twelve')]; e.value = ''; return got; }"
                               ) == [True, True, False]
        number.press("Enter")  # on the empty box: said what to type
        wait_for_text(students[2], "Type a number first, such as 0.25 or 12, then press Enter or Send.")
        number.fill("9" * 5000)
        number.press("Enter")
        wait_for_text(students[2], "That number has 5,000 characters")  # said, as before
        students[2].screenshot(path=str(ARTIFACTS / "follow_phone_number.png"))
        number.fill("256")
        number.press("Enter")
        wait_for_text(students[2], "Your answer is in: 256")
        wait_for_text(notes, "1 answer (number)", timeout_ms=30_000)
        assert students[2].evaluate(NO_SIDEWAYS)
        with notes.expect_download(timeout=120_000) as download:  # the record, one click, offline
            notes.get_by_role("button", name="Export the lecture").click()
        record = Path(download.value.path()).read_text(encoding="utf-8")
        assert "<td>dog</td><td>2</td>" in record and "The class:</b> 3 answers" in record
        # the plan names the quantity: the record marks the Scaling lab's measured Var(q·k) at d_k = 256
        measured = dot_product_variance_experiment(D_K_GRID).unscaled_variance[D_K_GRID.index(256)]
        assert f"<b>The right answer:</b> <span class=\"right\">{measured:.4g}</span> (computed by attnviz: Var(q·k) " \
               "at d_k = 256, measured over 4000 random pairs by the Scaling lab&#x27;s experiment (theory: d_k))" \
               in record
        for page in [lecturer, projector, notes, *students]:
            assert not exceptions_on(page)


def screenshot_of(page, locator) -> bytes:
    """The element's picture; found again where a run drew it anew meanwhile (the Lecture page redraws its cards as
    the room's warming ends: a clean-clone run once met the image detached, 'Element is not attached to the DOM')."""
    for attempt in range(3):
        try:
            return locator.screenshot()
        except PlaywrightError as err:
            if "not attached" not in str(err) or attempt == 2:
                raise
            wait_for_app_idle(page)
    raise AssertionError("unreachable")


def test_with_a_public_url_the_qr_codes_carry_it_and_no_loopback_warning(tmp_path, monkeypatch):
    """server.public_url set (a name that is only encoded, never opened): the follow QR code decodes to it, though
    the lecturer's browser is on 127.0.0.1, and the page does not warn."""
    settings = tmp_path / "attnviz.toml"
    settings.write_text('[server]\npublic_url = "http://lecture-hall.test:8501"\n', encoding="utf-8")
    monkeypatch.setenv("ATTNVIZ_SETTINGS", str(settings))
    with streamlit_server() as server, chromium_page(1280, 900) as page:
        _, _, follow = start_room(page, server)
        code = dict(parse_qsl(urlsplit(follow).query))["room"]
        qr = page.locator(".st-key-lecture_follow_card img")
        qr.wait_for(timeout=30_000)
        page.wait_for_timeout(500)
        seen = decode_qr(screenshot_of(page, qr))
        assert seen == f"http://lecture-hall.test:8501/follow?room={code}" and not is_loopback(seen)
        assert "is this computer's own" not in page.inner_text('[data-testid="stMain"]')
        assert not exceptions_on(page)
