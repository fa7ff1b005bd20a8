"""A participatory lecture on the class server for real: `deploy/class_server.py` with 2 Streamlit processes behind
HAProxy and its own redis-server, on loopback, driven by real Chromium. The lecturer, the projector, the lecturer's
phone and four students are browser contexts of their own, pinned to the two processes by HAProxy's cookie
(students alternate), so every room change and every answer crosses processes through Redis.

- the gate holds for every follower until Reveal; answers from the four, on both processes, are counted once each;
- one Streamlit process SIGKILLed mid-question: its students come back through the balancer to a live process,
  following again, with the answer the store acknowledged (the page reads it back from Redis);
- Reveal on the phone opens every follower's figures and draws the class beside the model on the projector;
- Next on the phone moves the projector and every follower, on both processes;
- a wrong presenter key changes nothing; a follower breaks away and comes back.

Needs Debian's haproxy and redis-server (tests/install_browser.sh). Only 127.0.0.1; every wait is bounded. The time
from the kill to each student following again is printed (the issue's target is 10 s), not asserted.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest
from browser_helpers import (
    ROOT,
    chromium_page,
    exceptions_on,
    free_port,
    people_browser,
    wait_for_app_idle,
    wait_for_text,
)
from class_server_helpers import ClassServer
from test_browser_follow import CLASS_COUNTS, CLASS_ROW, NO_FIGURES, follower_at, pill, start_room
from test_browser_lecture import decode_qr

sys.path.insert(0, str(ROOT / "deploy"))
from haproxy_config import COOKIE  # deploy/ is scripts, not a package

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
TOKENS = ("dog", "a", "dog", "home")  # the four students' answers; students 0 and 2 are on process p0


PASSPHRASE = "only the lecturer knows this"


@pytest.fixture
def class_server(tmp_path):
    """Two processes behind HAProxy; behind a balancer no browser is the server's own, so the lecturers' passphrase
    (in the class server's settings file) admits the lecturer."""
    port = free_port()
    settings = tmp_path / "attnviz.toml"
    settings.write_text(f'[lecture]\npassphrase = "{PASSPHRASE}"\n', encoding="utf-8")
    server = ClassServer(2, port, tmp_path, env={"ATTNVIZ_SETTINGS": str(settings)})
    try:
        server.wait_for(r"^ready http://", timeout=420)
        yield server, f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def pin(context, base: str, process: str) -> None:
    """HAProxy's cookie in this browser context names `process` (p0 or p1): its pages go to that process."""
    context.add_cookies([{"name": COOKIE, "value": process, "url": base}])


def pinned(browser, base: str, process: str, width: int, height: int, **options):
    """A browser context of its own pinned to `process` (p0 or p1): its page."""
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    pin(context, base, process)
    return context.new_page()


def streams(page) -> list:
    """Streamlit's websockets this page opens from now on (a reconnect opens a new one), each with its frames."""
    opened = []

    def on_socket(socket) -> None:
        if "/_stcore/stream" in socket.url:
            socket.frames = 0
            socket.on("framereceived", lambda _frame: setattr(socket, "frames", socket.frames + 1))
            opened.append(socket)

    page.on("websocket", on_socket)
    return opened


def wait_for_new_session(page, opened: list, before: int, timeout_s: float = 60) -> None:
    """Until the page has opened a websocket after the first `before` (to the live process, through the balancer)
    and that session has drawn the page: a page of the killed process still shows its last screen, so a text alone
    would not tell that it follows again."""
    deadline = time.monotonic() + timeout_s
    while not (len(opened) > before and opened[-1].frames > 0):
        assert time.monotonic() < deadline, f"no new session within {timeout_s} s of the kill"
        page.wait_for_timeout(100)  # lets Playwright deliver the page's websocket events
    wait_for_app_idle(page)


def test_a_class_on_two_processes_follows_answers_and_survives_a_killed_process(class_server):
    server, base = class_server
    # the lecturer in the worker's tab; everyone else in a browser context of their own (own cookies)
    with people_browser() as browser, chromium_page(1280, 900) as lecturer:
        pin(lecturer.context, base, "p0")  # cleared with the tab
        # the plan and room go to Redis
        projector_link, notes_link, follow_link = start_room(lecturer, base, PASSPHRASE)
        key = projector_link.split("key=", 1)[1].split("&", 1)[0]
        projector = pinned(browser, base, "p1", 1024, 768)  # the room made on p0, opened on p1
        projector.goto(f"{base}/{projector_link[2:]}")
        wait_for_text(projector, "Step 1 of 3", "Predict first.", "0 answers so far")
        notes = pinned(browser, base, "p0", 390, 844)
        notes_streams = streams(notes)
        notes.goto(f"{base}/{notes_link[2:]}")
        wait_for_text(notes, "Step 1 of 3", "not revealed yet")

        students = [pinned(browser, base, f"p{i % 2}", 390, 844, is_mobile=True, has_touch=True)
                    for i in range(len(TOKENS))]
        student_streams = [streams(student) for student in students]
        for student, token in zip(students, TOKENS, strict=True):
            student.goto(follow_link)
            follower_at(student, 1, "Where does 'ran' look?")
            assert student.evaluate(NO_FIGURES), "a follower's figures before Reveal"
            pill(student, token).click()
            wait_for_text(student, f"Your answer is in: '{token}'")  # acknowledged by the store
        wait_for_text(projector, "4 answers so far", timeout_ms=30_000)  # counted across both processes
        wait_for_text(notes, "4 answers (token)", timeout_ms=30_000)

        intruder = pinned(browser, base, "p1", 1024, 768)  # a crafted projector link
        intruder.goto(f"{base}/{projector_link[2:].replace(key, 'x' * 24).replace('step=1', 'step=3')}")
        wait_for_text(intruder, "presenter key is not room")
        intruder.context.close()
        notes.wait_for_timeout(2_000)
        assert "Step 1 of 3" in notes.inner_text('[data-testid="stMain"]')  # nothing moved

        victim = server.pids()[0]  # mid-question: p0 dies with two students, the lecturer and the phone on it
        before = [len(opened) for opened in student_streams]
        notes_before = len(notes_streams)
        killed = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        for student, opened, n, token in zip(students[0::2], student_streams[0::2], before[0::2], TOKENS[0::2],
                                             strict=True):
            wait_for_new_session(student, opened, n)
            # the answer the store acknowledged before the kill, read back by the new session
            wait_for_text(student, f"Your answer is in: '{token}'", "Step 1 of 3", timeout_ms=60_000)
            print(f"a student of the killed process follows again {time.monotonic() - killed:.1f} s after the kill")
            assert student.evaluate(NO_FIGURES)
        wait_for_new_session(notes, notes_streams, notes_before)  # the phone follows the room from p1 now
        wait_for_text(notes, "Step 1 of 3", "4 answers (token)", timeout_ms=60_000)  # no answer lost

        notes.get_by_role("button", name="Reveal").click()
        wait_for_text(notes, "Revealed")
        projector.locator(".st-key-lecture_class table.tally").wait_for(timeout=60_000)
        wait_for_text(projector, "The right answer: 'a' (token 1), 0.40", "1 of 4 picked it")
        counts = projector.evaluate(CLASS_COUNTS)  # no answer lost, none counted twice
        assert (counts["a ✓ right"], counts["dog"], counts["home"]) == ("1", "2", "1"), counts
        wait_for_app_idle(projector)
        projector.screenshot(path=str(ARTIFACTS / "follow_class_server_projector_revealed.png"))
        for i, student in enumerate(students):
            try:
                student.wait_for_function(CLASS_ROW, timeout=60_000, polling=200)
            except Exception:
                student.screenshot(path=str(ARTIFACTS / f"follow_class_server_student{i}_stuck.png"))
                raise

        notes.get_by_role("button", name="Next").click()
        for page in [projector, *students]:
            follower_at(page, 2, "The causal mask")
        assert "/masks_lab?" in projector.url and all(s.url == follow_link for s in students)

        projector.get_by_role("button", name="Students").click()  # the balancer's address, not a process's
        qr = projector.locator(".st-key-lecture_follow_qr img")
        qr.wait_for(timeout=30_000)
        projector.wait_for_timeout(500)
        assert decode_qr(qr.screenshot()) == follow_link
        projector.keyboard.press("Escape")

        wanderer = students[1]  # explores once the step is revealed (before, the view would show its answer)
        assert wanderer.get_by_role("link", name="Explore this view").count() == 0
        notes.get_by_role("button", name="Reveal").click()
        wait_for_text(notes, "Revealed")
        wanderer.get_by_role("link", name="Explore this view").click(timeout=60_000)
        wait_for_text(wanderer, "Back to following", "Masks lab")
        wanderer.get_by_role("link", name="Back to following").click()
        follower_at(wanderer, 2, "The causal mask")
        for page in [projector, notes, *students]:
            assert not exceptions_on(page)
