"""The lecture store's contract (attnviz.lecture.store.base), the same tests on both backends: MemoryStore, and
RedisStore against a real redis-server started here on a loopback port (tests/redis_helpers.py).

Time is a clock the tests move (both backends take one), so lifetimes and the flood limit are tested without waits.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import uuid

import pytest
import redis
from browser_helpers import free_port
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis_helpers import redis_server

from attnviz.lecture.store import LimitReached, MemoryStore, StoreError, StoreLimits, StoreUnavailable, WrongKey
from attnviz.lecture.store.base import CODE_LETTERS, KEY_PATTERN
from attnviz.lecture.store.redis_store import RedisStore

T0 = 1_764_000_000.0
ODD = ["", " ", "\x00", "A\nB", "ABCD!", "<script>alert(1)</script>", "../../etc/passwd", "*", "a:b:c", "ÄÖÜ€",
       "🙂" * 3, "x" * 100_000, "'; DROP TABLE rooms; --", "%00", "\\", "{}", "KEYS *", None, 12345, 3.5, b"bytes",
       ["list"], {"a": 1}]


class Clock:
    def __init__(self):
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(params=["memory", "redis"])
def make_store(request):
    """store(limits) -> a fresh store of this backend with its own clock (store.clock); redis: its own key prefix."""
    made = []

    def make(limits: StoreLimits | None = None):
        clock = Clock()
        if request.param == "memory":
            store = MemoryStore(limits, clock=clock)
        else:
            url = request.getfixturevalue("redis_url")
            store = RedisStore(url, limits, clock=clock, prefix=f"t{uuid.uuid4().hex[:12]}:")
            made.append(store)
        store.clock = clock
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()


def session() -> str:
    return str(uuid.uuid4())


# rooms


def test_a_new_room_is_at_step_one_with_a_presenter_key(store):
    code, key = store.create_room("attention")
    assert len(code) == 5 and set(code) <= set(CODE_LETTERS) and KEY_PATTERN.fullmatch(key)
    state = store.room(code)
    assert (state.code, state.plan_id, state.step, state.revealed) == (code, "attention", 1, frozenset())
    assert state.started == state.step_started == T0
    assert store.version(code) == state.version
    assert store.room(code.lower()) == state  # links may carry it in lower case
    assert store.is_presenter(code, key) and not store.is_presenter(code, key[:-1] + ("A" if key[-1] != "A" else "B"))
    other, other_key = store.create_room("attention")
    assert other != code and other_key != key and not store.is_presenter(code, other_key)
    store.ping()


def test_an_unknown_room_is_none_and_a_malformed_code_is_a_store_error(store):
    assert store.room("ZZZZZ") is None and store.version("ZZZZZ") is None
    assert store.answer_count("ZZZZZ", 1) == 0 and store.my_answer("ZZZZZ", 1, session()) is None
    assert store.answers("ZZZZZ", 1) == []
    with pytest.raises(StoreError, match="not a room code"):
        store.room("AB!DE")
    with pytest.raises(StoreError, match="no room ZZZZZ"):
        store.go_to("ZZZZZ", secrets.token_urlsafe(18), 2)


def test_the_presenter_moves_and_reveals_and_every_change_grows_the_version(store):
    code, key = store.create_room("attention")
    v1 = store.version(code)
    store.clock.now += 30
    moved = store.go_to(code, key, 3)
    assert (moved.step, moved.step_started, moved.started) == (3, T0 + 30, T0)
    assert moved.version > v1 and store.room(code) == moved
    assert store.go_to(code, key, 3).version == moved.version  # the same step again: no change
    revealed = store.reveal(code, key, 3)
    assert revealed.revealed == {3} and revealed.version > moved.version
    assert store.reveal(code, key, 3).version == revealed.version
    back = store.go_to(code, key, "2")  # a step number from a link
    assert back.step == 2 and back.revealed == {3}
    for bad_step in (0, -1, 10_001, "two", "", None, 2.5j, True, "9" * 5000):
        with pytest.raises(StoreError):
            store.go_to(code, key, bad_step)
    assert store.room(code) == back


def test_a_steps_clock_goes_on_from_where_it_stopped_when_the_lecture_comes_back_to_it(store):
    """The notes' "on this step" is now - step_started: 60 s on step 2, 40 s on step 3, back to step 2 for 10 s
    reads 70 s, not 10 (the clock restarted at every return); step 3, never left twice, then reads its 40 s + more."""
    code, key = store.create_room("attention")
    store.go_to(code, key, 2)
    store.clock.now += 60
    store.go_to(code, key, 3)
    store.clock.now += 40
    back = store.go_to(code, key, 2)
    store.clock.now += 10
    assert store.clock.now - back.step_started == pytest.approx(70)
    assert store.clock.now - store.room(code).step_started == pytest.approx(70)
    again = store.go_to(code, key, 3)
    store.clock.now += 5
    assert store.clock.now - again.step_started == pytest.approx(45)
    fresh = store.go_to(code, key, 4)  # a step never visited starts at 0
    assert fresh.step_started == store.clock.now
    assert fresh.started == T0


@pytest.mark.parametrize("wrong", ["another room's", "malformed", "missing", "one letter off"])
def test_a_wrong_key_changes_nothing(make_store, wrong):
    store = make_store()
    code, key = store.create_room("attention")
    _, other_key = store.create_room("attention")
    store.answer(code, 1, session(), "cat")
    bad = {"another room's": other_key, "malformed": "x<>" * 8, "missing": None,
           "one letter off": key[:-1] + ("A" if key[-1] != "A" else "B")}[wrong]
    before = store.room(code)
    for act in (lambda: store.go_to(code, bad, 2), lambda: store.reveal(code, bad, 1),
                lambda: store.answers(code, 1, bad)):
        with pytest.raises(WrongKey, match="presenter key|lecturer's link") as raised:
            act()
        assert "Nothing was changed" in str(raised.value) or "after Reveal" in str(raised.value)
    assert store.room(code) == before and not store.is_presenter(code, bad)


# answers


def test_one_answer_per_session_per_step_replaceable_until_reveal(store):
    code, key = store.create_room("attention")
    alice, bob = session(), session()
    assert store.answer(code, 1, alice, "cat") == 1
    assert store.answer(code, 1, bob, "mat") == 2
    assert store.answer(code, 1, alice, "sat") == 2  # changed her mind: still one answer
    assert store.answer(code, 2, alice, " the") == 1  # another step counts apart; a token's space is kept
    assert store.answer_count(code, 1) == 2 and store.answer_count(code, 2) == 1 and store.answer_count(code, 3) == 0
    assert store.my_answer(code, 1, alice) == "sat" and store.my_answer(code, 2, alice) == " the"
    assert store.my_answer(code, 3, alice) is None
    store.reveal(code, key, 1)
    with pytest.raises(StoreError, match="already revealed"):
        store.answer(code, 1, alice, "mat")
    with pytest.raises(StoreError, match="already revealed"):
        store.answer(code, 1, session(), "mat")
    assert store.my_answer(code, 1, alice) == "sat" and store.answer_count(code, 1) == 2
    assert store.answer(code, 2, bob, "0.5") == 2  # step 2 is still open


def test_answers_are_hidden_before_reveal_without_the_key(store):
    code, key = store.create_room("attention")
    sessions = [session() for _ in range(3)]
    for s, value in zip(sessions, ["cat", "mat", "cat"], strict=True):
        store.answer(code, 1, s, value)
    with pytest.raises(WrongKey):
        store.answers(code, 1)
    assert sorted(a.value for a in store.answers(code, 1, key)) == ["cat", "cat", "mat"]
    assert store.answer_count(code, 1) == 3  # the count is for everyone
    store.reveal(code, key, 1)
    held = store.answers(code, 1)
    assert sorted((a.session, a.value) for a in held) == sorted(zip(sessions, ["cat", "mat", "cat"], strict=True))
    assert store.answers(code, 2, key) == []  # nobody answered step 2
    with pytest.raises(WrongKey):
        store.answers(code, 2)  # ... which is not revealed either


def test_answers_change_the_version_so_the_presenter_sees_the_count_grow(store):
    code, _ = store.create_room("attention")
    before = store.version(code)
    store.answer(code, 1, session(), "cat")
    assert store.version(code) > before


def test_answer_size_and_empty_answers(make_store):
    store = make_store(StoreLimits(answer_chars=10))
    code, _ = store.create_room("attention")
    assert store.answer(code, 1, session(), "x" * 10) == 1
    with pytest.raises(LimitReached, match="at most 10 characters; this one has 11"):
        store.answer(code, 1, session(), "x" * 11)
    with pytest.raises(LimitReached):
        store.answer(code, 1, session(), "x" * 1_000_000)
    for empty in ("", "   ", None, ["cat"]):
        with pytest.raises(StoreError):
            store.answer(code, 1, session(), empty)
    assert store.answer_count(code, 1) == 1


def test_a_flood_from_one_session_is_refused_for_a_minute(make_store):
    store = make_store(StoreLimits(answers_per_minute=3))
    code, _ = store.create_room("attention")
    flood, calm = session(), session()
    for step in (1, 2, 3):  # the limit is across steps
        store.answer(code, step, flood, "cat")
    with pytest.raises(LimitReached, match="At most 3 answers a minute"):
        store.answer(code, 4, flood, "cat")
    assert store.my_answer(code, 4, flood) is None
    assert store.answer(code, 1, calm, "mat") == 2  # other students are not held back
    store.clock.now += 61
    assert store.answer(code, 4, flood, "cat") == 1


def test_many_sessions_answering_at_once_are_each_counted_once(make_store):
    store = make_store()
    code, key = store.create_room("attention")
    sessions = [session() for _ in range(40)]
    errors = []

    def answer(s: str) -> None:
        try:
            for value in ("cat", "mat"):  # each changes its answer once
                store.answer(code, 1, s, value)
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=answer, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert store.answer_count(code, 1) == 40
    assert sorted(a.session for a in store.answers(code, 1, key)) == sorted(sessions)
    assert {a.value for a in store.answers(code, 1, key)} == {"mat"}


# limits on rooms and lifetimes


def test_the_room_limit_and_a_room_forgotten_after_its_lifetime(make_store):
    store = make_store(StoreLimits(rooms=2, room_hours=1.0))
    first, key = store.create_room("attention")
    store.clock.now += 1800
    second, _ = store.create_room("attention")
    with pytest.raises(LimitReached, match="2 live rooms"):
        store.create_room("attention")
    store.clock.now += 1000
    store.go_to(first, key, 2)  # a change keeps a room alive
    store.clock.now += 2700  # second: 3700 s idle, past its hour; first: 2700 s
    assert store.room(second) is None and store.version(second) is None
    assert store.room(first).step == 2
    third, _ = store.create_room("attention")  # the expired room no longer counts
    assert store.room(third) is not None
    store.clock.now += 3601
    assert store.room(first) is None and store.room(third) is None
    with pytest.raises(StoreError, match="no room"):
        store.go_to(first, key, 3)
    with pytest.raises(StoreError, match="no room"):
        store.answer(first, 1, session(), "cat")
    assert not store.is_presenter(first, key)
    store.create_room("attention")
    store.create_room("attention")


def test_a_flood_of_room_starts_from_student_browsers_leaves_a_lecturer_able_to_start_a_room(make_store):
    """A server open to everyone (lecture.lecturers = "everyone"): 40 student browsers press Start three times each,
    and a fourth (a reload). Each browser keeps at most its 3 rooms, the server its 10, a room with answers is never
    pushed out, and the admitted lecturer's start pushes out a student's room without answers, as do the flood's
    starts after it: the lecturer's room, and the student room with answers, stay."""
    store = make_store(StoreLimits(rooms=10, rooms_per_browser=3))
    students = [session() for _ in range(40)]
    answered, _ = store.create_room("attention", students[0], admitted=False)
    store.answer(answered, 1, session(), "cat")
    for _ in range(4):
        for student in students:
            store.clock.now += 1
            store.create_room("attention", student, admitted=False)
    lecturer = session()
    code, key = store.create_room("attention", lecturer, admitted=True)
    for student in students:
        store.clock.now += 1
        store.create_room("attention", student, admitted=False)
    assert store.room(code) is not None and store.is_presenter(code, key)
    assert store.room(answered) is not None
    assert store.rooms_running("attention") == 10
    # the admitted lecturer's and the answered rooms fill the server: a student's start is refused, and said
    full = make_store(StoreLimits(rooms=2, rooms_per_browser=3))
    mine, _ = full.create_room("attention", lecturer, admitted=True)
    theirs, _ = full.create_room("attention", students[0], admitted=False)
    full.answer(theirs, 1, session(), "cat")
    with pytest.raises(LimitReached, match="already holds 2 live rooms"):
        full.create_room("attention", students[1], admitted=False)
    full.clock.now += 3600  # an admitted lecturer's room without answers, unchanged for an hour, may go
    third, _ = full.create_room("attention", students[1], admitted=False)
    assert full.room(mine) is None and full.room(theirs) is not None and full.room(third) is not None


def test_a_browser_keeps_at_most_its_rooms_its_own_oldest_without_answers_goes_first(make_store):
    store = make_store(StoreLimits(rooms_per_browser=2))
    me = session()
    first, _ = store.create_room("attention", me)
    store.clock.now += 1
    second, _ = store.create_room("attention", me)
    store.answer(first, 1, session(), "cat")  # the first has answers now: the second goes for a third
    store.clock.now += 1
    third, _ = store.create_room("attention", me)
    assert store.room(first) is not None and store.room(second) is None and store.room(third) is not None
    store.answer(third, 1, session(), "cat")
    with pytest.raises(LimitReached, match="This browser already holds 2 live rooms with answers"):
        store.create_room("attention", me)
    store.create_room("attention", session())  # another browser: its own count
    assert store.rooms_running("attention") == 3 and store.rooms_running("other") == 0


def test_a_flood_of_uploads_from_student_browsers_leaves_a_lecturers_plan(make_store):
    """The 65th upload pushed out the oldest plan, the lecturer's. Now a flood from student browsers pushes out only
    students' plans that no live room runs; the admitted lecturer's plan and a plan in use stay; with nothing that may
    go, a student's upload is refused."""
    store = make_store(StoreLimits(plans=5, plans_per_browser=2, plan_bytes=100))
    lecturer = session()
    store.put_plan("ulecturer", b"mine", lecturer, admitted=True)
    store.put_plan("urunning", b"a student's, in use", session(), admitted=False)
    store.create_room("urunning", session(), admitted=False)
    for n in range(60):
        store.put_plan(f"uflood{n}", b"flood", session(), admitted=False)
    assert store.plan("ulecturer") == b"mine" and store.plan("urunning") is not None
    assert store.plan("uflood59") == b"flood" and store.plan("uflood0") is None
    one = session()  # one browser: its own oldest goes past its 2
    for n in range(3):
        store.put_plan(f"uone{n}", b"one", one, admitted=False)
    assert [store.plan(f"uone{n}") is not None for n in range(3)] == [False, True, True]
    for n in range(3):  # the lecturer's own uploads: the admitted ones fill the rest
        store.put_plan(f"ulecturer{n}", b"mine too", session(), admitted=True)
    with pytest.raises(LimitReached, match="already holds 5 uploaded plans"):
        store.put_plan("ulate", b"late", session(), admitted=False)
    store.put_plan("ulecturer3", b"a lecturer's", session(), admitted=True)  # an admitted upload: the oldest admitted
    assert store.plan("ulecturer") is None and store.plan("urunning") is not None  # no room runs it: it went


# uploaded plans


def test_uploaded_plans_are_kept_and_the_oldest_goes_first(make_store):
    store = make_store(StoreLimits(plans=2, plan_bytes=100))
    assert store.plan("u0123456789") is None
    store.put_plan("u1", b"[lecture]\ntitle = 'one'\n")
    store.put_plan("u2", b"two")
    store.put_plan("u1", b"one again")  # uploaded again: now the newest
    store.put_plan("u3", b"three")
    assert (store.plan("u1"), store.plan("u2"), store.plan("u3")) == (b"one again", None, b"three")
    with pytest.raises(LimitReached, match="at most 100 bytes"):
        store.put_plan("u4", b"x" * 101)
    with pytest.raises(StoreError):
        store.put_plan("u5", "text, not bytes")
    assert store.plan("u4") is None


# short links


def test_a_short_link_stands_for_its_query(make_store):
    store = make_store(StoreLimits(link_chars=100, link_days=1.0))
    query = "text=The+cat+sat&layer=2&head=3"
    link = store.shorten(query)
    assert link == store.shorten(query) and link != store.shorten(query + "&x=1")
    assert store.expand(link) == query and store.expand(f" {link} ") == query
    assert store.expand("abcd1234ef") is None  # well formed, unknown
    with pytest.raises(LimitReached, match="at most 100"):
        store.shorten("x" * 101)
    store.clock.now += 86401
    assert store.expand(link) is None  # expired
    assert store.expand(store.shorten(query)) == query  # made again


def test_a_short_link_made_on_one_store_expands_on_another(make_store):
    """The id is the query's hash, so every process makes the same id."""
    assert make_store().shorten("a=1") == make_store().shorten("a=1")


# crafted inputs


@pytest.mark.parametrize("odd", ODD, ids=lambda v: repr(v)[:20])
def test_crafted_inputs_get_a_store_error_never_another_exception(store, odd):
    code, key = store.create_room("attention")
    calls = {
        "room": lambda: store.room(odd), "version": lambda: store.version(odd),
        "go_to code": lambda: store.go_to(odd, key, 2), "go_to key": lambda: store.go_to(code, odd, 2),
        "go_to step": lambda: store.go_to(code, key, odd), "reveal key": lambda: store.reveal(code, odd, 1),
        "answer code": lambda: store.answer(odd, 1, session(), "cat"),
        "answer step": lambda: store.answer(code, odd, session(), "cat"),
        "answer session": lambda: store.answer(code, 1, odd, "cat"),
        "answers key": lambda: store.answers(code, 1, odd), "answer_count": lambda: store.answer_count(odd, 1),
        "my_answer": lambda: store.my_answer(code, 1, odd), "plan": lambda: store.plan(odd),
        "put_plan": lambda: store.put_plan(odd, b"x"), "expand": lambda: store.expand(odd),
        "shorten": lambda: store.shorten(odd), "create_room": lambda: store.create_room(odd),
    }
    for name, call in calls.items():
        try:
            call()
        except StoreError as err:
            assert str(err) and "Traceback" not in str(err), name
            assert len(str(err)) < 400, (name, str(err)[:100])  # a huge input is not echoed back whole
    assert not store.is_presenter(code, odd) and not store.is_presenter(odd, key)
    assert store.room(code).step == 1 and store.room(code).revealed == frozenset()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_any_text_in_any_argument_gets_a_result_or_a_store_error(store, text):
    code, key = store.create_room("attention")
    for call in (lambda: store.room(text), lambda: store.go_to(text, key, 1), lambda: store.go_to(code, text, 1),
                 lambda: store.answer(code, text, session(), "x"), lambda: store.answer(code, 1, text, "x"),
                 lambda: store.answer(code, 2, session(), text), lambda: store.expand(text),
                 lambda: store.shorten(text), lambda: store.plan(text), lambda: store.answers(code, 3, text)):
        with contextlib.suppress(StoreError):
            call()
    assert store.room(code).step == 1


# a store that cannot be reached


def every_call(store) -> dict:
    code, key, who = "ABCDE", secrets.token_urlsafe(18), session()
    return {"create_room": lambda: store.create_room("attention"), "room": lambda: store.room(code),
            "version": lambda: store.version(code), "is_presenter": lambda: store.is_presenter(code, key),
            "go_to": lambda: store.go_to(code, key, 2), "reveal": lambda: store.reveal(code, key, 2),
            "answer": lambda: store.answer(code, 1, who, "cat"), "answer_count": lambda: store.answer_count(code, 1),
            "answers": lambda: store.answers(code, 1, key), "my_answer": lambda: store.my_answer(code, 1, who),
            "put_plan": lambda: store.put_plan("u1", b"x"), "plan": lambda: store.plan("u1"),
            "shorten": lambda: store.shorten("a=1"), "expand": lambda: store.expand("abcd1234"),
            "rooms_running": lambda: store.rooms_running("attention"), "ping": store.ping}


def test_a_redis_that_cannot_be_reached_is_store_unavailable_on_every_call():
    store = RedisStore(f"redis://:secret@127.0.0.1:{free_port()}/0")  # nothing listens there
    calls = every_call(store)
    assert len(calls) == len([m for m in dir(store) if not m.startswith("_") and callable(getattr(store, m))]) - 1
    for name, call in calls.items():
        with pytest.raises(StoreUnavailable, match=r"cannot be reached.*every other page works") as raised:
            call()
        assert "secret" not in str(raised.value), name  # the password never reaches a screen


def test_a_wrong_redis_password_is_store_unavailable(redis_url):
    wrong = redis_url.replace("redis://:", "redis://:wrong", 1)
    for name, call in every_call(RedisStore(wrong)).items():
        with pytest.raises(StoreUnavailable, match="refused this server's password") as raised:
            call()
        assert "wrong" not in str(raised.value), name


def test_a_url_that_is_not_redis_is_store_unavailable():
    with pytest.raises(StoreUnavailable, match="not a Redis URL"):
        RedisStore("http://127.0.0.1:80/")


# Redis's own side: lifetimes given to Redis, no presenter key kept


def test_redis_keys_have_lifetimes_and_hold_no_presenter_key(redis_url):
    store = RedisStore(redis_url, StoreLimits(room_hours=2.0, link_days=1.0), prefix="ttl:")
    code, key = store.create_room("attention")
    store.answer(code, 1, session(), "cat")
    link = store.shorten("q=1")
    raw = redis.Redis.from_url(redis_url)
    try:
        assert 0 < raw.ttl(f"ttl:room:{code}") <= 7200 and 0 < raw.ttl(f"ttl:answers:{code}") <= 7200
        assert 0 < raw.ttl(f"ttl:link:{link}") <= 86400
        everything = b"".join(raw.dump(k) or b"" for k in raw.keys("ttl:*"))
        assert key.encode() not in everything
    finally:
        raw.close()
        store.close()
