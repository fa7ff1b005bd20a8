"""Nothing of a lecture is seen before Reveal, and rooms and uploaded plans are the lecturers', in AppTest (each AppTest
run is one browser session):
- a student (a browser not on the server's machine) tries every page of the menu, the room's follow link, every
  step's follower page, every link those pages offer, the Lecture plan page at every step and the presenter notes
  without a key: none shows an unrevealed step's notes, explanation or expected answer, a predict-first step's
  figures, the class's answers, or the presenter key;
- a student may not start a room or upload a plan; the lecturers' passphrase admits a browser;
- on a server open to everyone, a flood of room starts and uploads from student browsers leaves the lecturer a room
  and the plan they uploaded.
(The same flood against the store itself, memory and Redis: tests/lecture/test_store_contract.py.)"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, page_text, run_app

from attnviz.lecture import load_plan, step_query
from attnviz.lecture.store import StoreLimits
from attnviz.paths import LECTURES
from attnviz.server_settings import ServerSettings
from ui import access
from ui.lecture import store as ui_store
from ui.lecture.lecturer import COOKIE, passphrase_token
from ui.lecture.presenter_key import HELD
from ui.lecture.store import lecture_store

FILES = {path: file for file, path, _ in app_menu()}
PLAN = load_plan(LECTURES / "attention.toml", {path: "" for path in FILES})
STUDENT = "192.0.2.7"  # a documentation address: a browser on another machine
PASSPHRASE = "only lecturers know this"


@pytest.fixture
def student(monkeypatch):
    monkeypatch.setattr(access, "client_address", lambda: STUDENT)


def use_settings(monkeypatch, **values) -> ServerSettings:
    """This server's settings for the test: the pages' and the store's (a store of its own, for its limits)."""
    settings = ServerSettings(**values)
    monkeypatch.setattr(access, "server_settings", lambda: settings)
    monkeypatch.setattr(ui_store, "server_settings", lambda: settings)
    return settings


def everything_sent(at) -> str:
    """Every element the page sent, as text: markdown, alerts, captions, HTML (links, scripts), code, widgets' labels
    and options, the tables' cells."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)

    walk(at._tree)
    return " ".join(" ".join(out).replace("\\n", " ").split())


def flat(text: str) -> str:
    return " ".join(text.split())


def secrets(key: str) -> dict[str, str]:
    """What a student must not read before Reveal (a step that asks nothing shows its own explanation at once): each
    step's notes and explanation (a piece long enough to be unmistakable), an expected answer that is more than a
    choice's option or a bare number, and the presenter key."""
    found = {"the presenter key": key}
    for number, step in enumerate(PLAN.steps, start=1):
        for field in ("notes", "explain", "expected"):
            text = flat(str(getattr(step, field, "") or ""))
            if field == "expected" and (len(text) < 12 or (step.answer and text in step.answer.options)):
                continue
            if text:
                found[f"step {number}'s {field}"] = text[:60]
    return found


def leaks(at, key: str, shown: str = "") -> list[str]:
    """The secrets this page gives away; shown: the one it may show (a step that asks nothing shows its explain)."""
    sent = everything_sent(at)
    return [what for what, text in secrets(key).items()
            if what != shown and (text in sent or flat(text) in flat(page_text(at)))]


def links_offered(at) -> list[str]:
    """The app's own links on the page (href="./…" in its HTML and markdown), as query strings with their path."""
    sent = everything_sent(at)
    return sorted({m.replace("&amp;", "&") for m in re.findall(r'href=\\?"(\./[^"\\]*)', sent)})


def open_link(link: str):
    parts = urlsplit(link)
    path = parts.path.removeprefix("./")
    query: dict[str, list[str]] = {}
    for k, v in parse_qsl(parts.query):
        query.setdefault(k, []).append(v)
    return run_app({k: v[0] if len(v) == 1 else v for k, v in query.items()}, page=FILES[path])


def test_a_student_reads_no_unrevealed_answer_note_or_key_on_any_page_or_link(student):
    store = lecture_store()
    code, key = store.create_room("attention")
    problems, seen = [], set()

    def look(at, where: str, number: int | None = None) -> None:
        assert not at.exception, (where, [e.value for e in at.exception])
        step = PLAN.step(number) if number else None
        asks_nothing = step is not None and not (step.predict_first or step.answer)
        problems.extend(f"{where}: {what}" for what in leaks(at, key, f"step {number}'s explain" if asks_nothing else ""))
        if step is not None and (step.predict_first or step.answer):
            if step.predict_first and chart_specs(at):
                problems.append(f"{where}: figures before Reveal: {sorted(chart_specs(at))}")
            if "lecture_class" in everything_sent(at):
                problems.append(f"{where}: the class's answers before Reveal")
            if "attnviz-lecture-explore" in everything_sent(at):
                problems.append(f"{where}: Explore this view is open before Reveal")

    for file, path, _ in app_menu():  # every page of the menu, as a student opens it from Explore (with the room)
        look(run_app({"room": code}, page=file), f"/{path}?room={code}")
    follow = run_app({"room": code}, page=FILES["follow"])
    look(follow, "/follow")
    lecture = run_app({"lecture": "attention"}, page=FILES["lecture"])
    assert "lecture_start" not in [b.key for b in lecture.button] and not lecture.get("file_uploader")
    for number in range(1, len(PLAN.steps) + 1):
        lecture.selectbox(key="lecture_at").set_value(number).run()
        look(lecture, f"/lecture, step {number}")
    for number, step in enumerate(PLAN.steps, start=1):
        store.go_to(code, key, number)
        query = dict(step_query(step, lecture="attention", number=number, room=code, present=False))
        follower = run_app(query, page=FILES[step.page])
        look(follower, f"step {number}'s follower page", number)
        for link in links_offered(follower):
            if link not in seen:
                seen.add(link)
                look(open_link(link), f"step {number}: {link}", number)
    for query in ({"room": code}, {"room": code, "key": "x" * 24}):
        look(run_app(query, page=FILES["lecture_notes"]), f"/lecture_notes?{query}")
    assert not problems, "\n".join(problems)

    store.reveal(code, key, len(PLAN.steps) - 1)  # once revealed, the view is the class's to explore
    number = len(PLAN.steps) - 1
    step = PLAN.step(number)
    store.go_to(code, key, number)
    follower = run_app(dict(step_query(step, lecture="attention", number=number, room=code, present=False)),
                       page=FILES[step.page])
    assert "attnviz-lecture-explore" in everything_sent(follower)


def test_a_student_may_not_start_a_room_or_upload_and_the_passphrase_admits(monkeypatch, student):
    use_settings(monkeypatch, lecture_passphrase=PASSPHRASE)
    at = run_app({}, page=FILES["lecture"])
    assert_healthy(at)
    assert "lecture_start" not in [b.key for b in at.button] and not at.get("file_uploader")
    assert "Rooms and uploaded plans are the lecturers' on this server" in page_text(at)
    at.text_input(key="lecturer_passphrase").set_value("a student's guess").run()
    assert "That is not this server's lecturers' passphrase." in page_text(at)
    assert "lecture_start" not in [b.key for b in at.button]
    at.text_input(key="lecturer_passphrase").set_value(PASSPHRASE).run()
    assert "lecture_start" in [b.key for b in at.button] and at.get("file_uploader")
    assert any(f"{COOKIE}={passphrase_token(PASSPHRASE)}" in e.proto.body for e in at.get("html"))  # kept for a reload
    assert PASSPHRASE not in everything_sent(at)
    at.button(key="lecture_start").click().run()
    code, key = at.session_state["lecture_rooms"]["attention"]
    assert lecture_store().is_presenter(code, key)
    behind = use_settings(monkeypatch, behind_balancer=True)  # a class server with no passphrase: nobody lectures
    assert behind.lecture_passphrase == ""
    monkeypatch.setattr(access, "client_address", lambda: None)
    closed = run_app({}, page=FILES["lecture"])
    assert "lecture_start" not in [b.key for b in closed.button]
    assert "until the server's keeper sets lecture.passphrase" in page_text(closed)


def upload(at, name: str, data: bytes) -> str:
    """Upload a plan on the Lecture page -> its id (the page picks it)."""
    at.get("file_uploader")[0].set_value((name, data, "application/toml")).run()
    assert not at.error, [e.value for e in at.error]
    return at.session_state["lecture_uploads"][-1]


def test_on_a_server_open_to_everyone_a_flood_of_student_rooms_and_uploads_leaves_the_lecturer_a_room_and_a_plan(
        monkeypatch):
    """lecture.lecturers = "everyone": the lecturer (this machine) uploads a plan and starts its room; then six student
    browsers each press Start three times (a reload before each: a new session, the same browser) and upload two
    plans. The store holds 4 rooms (2 a browser) and 3 plans (1 a browser): the students' push out each other's,
    never the lecturer's."""
    use_settings(monkeypatch, lecturers="everyone",
                 store_limits=StoreLimits(rooms=4, rooms_per_browser=2, plans=3, plans_per_browser=1))
    lecturer = run_app({}, page=FILES["lecture"])
    plan = (LECTURES / "attention.toml").read_bytes()
    mine = upload(lecturer, "mine.toml", plan.replace(b"from why to how", b"the lecturer's own"))
    lecturer.button(key="lecture_start").click().run()
    code, key = lecturer.session_state["lecture_rooms"][mine]
    monkeypatch.setattr(access, "client_address", lambda: STUDENT)
    store = lecture_store()
    for n in range(6):
        browser = run_app({}, page=FILES["lecture"])
        for _ in range(3):
            browser.button(key="lecture_start").click().run()
            assert not browser.warning, [w.value for w in browser.warning]
            # a reload in a browser that forgot its keys: a new session, the same browser id (its cookie)
            browser.session_state["lecture_rooms"], browser.session_state[HELD] = {}, {}
            browser.run()
        for k in range(2):
            upload(browser, f"flood{n}{k}.toml", plan.replace(b"from why to how", f"flood {n} {k}".encode()))
    assert store.is_presenter(code, key) and store.room(code).plan_id == mine
    assert store.plan(mine) is not None
    again = run_app({}, page=FILES["lecture"])  # a student's last start still finds a room that may go
    again.button(key="lecture_start").click().run()
    assert not again.warning and store.room(code) is not None
