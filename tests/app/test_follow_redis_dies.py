"""The class server's Redis dies mid-lecture (a real redis-server, SIGKILLed, then started again on its port and
folder, as deploy/class_server.py restarts it): while it is down the projector, the presenter notes and a follower
say so clearly (no traceback) and the other pages work; once it is back every view follows the room again, with
the answer it had acknowledged (its append-only file brings every key back)."""

import signal
from pathlib import Path

import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, page_text, run_app
from redis_helpers import redis_server

from attnviz.lecture import load_plan, step_query
from attnviz.server_settings import ServerSettings
from ui.lecture import store as ui_store

CLASS_STEPS = Path(__file__).resolve().parents[1] / "lecture" / "class_steps.toml"
FILES = {path: file for file, path, _ in app_menu()}
PLAN_ID = "uredisdies"
DOWN = "The lecture's shared store cannot be reached"


@pytest.fixture
def redis_room(tmp_path, monkeypatch):
    """A real redis-server as this process's lecture store, the participatory plan in it and a room at step 1 ->
    (server, plan, code, key)."""
    with redis_server(tmp_path / "redis") as server:
        settings = ServerSettings(store_backend="redis", store_url=server.url)
        monkeypatch.setattr(ui_store, "server_settings", lambda: settings)
        store = ui_store.lecture_store()
        store.put_plan(PLAN_ID, CLASS_STEPS.read_bytes())
        code, key = store.create_room(PLAN_ID)
        try:
            yield server, load_plan(CLASS_STEPS, {path: "" for path in FILES}), code, key
        finally:
            store.close()


def open_step(plan, number: int, code: str, key: str | None = None):
    step = plan.step(number)
    return run_app(dict(step_query(step, lecture=PLAN_ID, number=number, room=code, key=key, present=key is not None)),
                   page=FILES[step.page])


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_the_lecture_views_say_that_redis_is_gone_and_follow_again_when_it_is_back(redis_room):
    server, plan, code, key = redis_room
    follower = open_step(plan, 1, code)
    follower.get("button_group")[0].set_value(2).run()  # 'dog', acknowledged by Redis
    projector = open_step(plan, 1, code, key)
    notes = run_app({"room": code, "key": key}, page="app_pages/lecture_notes.py")
    for at in (follower, projector, notes):
        assert_healthy(at)
        assert not errors(at)
    assert "Your answer is in: 'dog' (token 2)" in page_text(follower)
    assert "**1** answer (token)" in page_text(notes)

    server.proc.send_signal(signal.SIGKILL)  # mid-question, before the class server would start it again
    server.proc.wait(10)
    fresh_follower = run_app({"room": code}, page="app_pages/follow.py")  # a student who opens the link now
    for at in (follower.run(), projector.run(), notes.run(), fresh_follower):
        assert not at.exception, [e.value for e in at.exception]
        said = errors(at)
        assert any(DOWN in e and "every page of the app still works on its own" in e for e in said), page_text(at)
    explorer = run_app({"text": "The cat sat."})  # another page, meanwhile
    assert_healthy(explorer)
    assert not explorer.error and chart_specs(explorer)

    server.start()  # the class server starts it again: same port, same folder, its append-only file
    server.wait_ready(20)
    for at in (follower.run(), projector.run(), notes.run()):
        assert_healthy(at)
        assert not errors(at), errors(at)
    assert "Your answer is in: 'dog' (token 2)" in page_text(follower)  # the acknowledged answer survived
    assert "**1** answer (token)" in page_text(notes)
    assert [h.value for h in notes.header] == ["Step 1 of 3: Where does 'ran' look?"]
    notes.button(key="notes_reveal").click().run()  # the room works again: Reveal opens the follower's figures
    assert ui_store.lecture_store().room(code).revealed == {1}
    assert "lecture_class_row" in chart_specs(follower.run())
