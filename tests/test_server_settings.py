"""The server's settings file: defaults when silent, a clear message and the default when wrong."""

from pathlib import Path

import pytest

from attnviz.lecture.store import MemoryStore, StoreLimits, StoreUnavailable, open_store
from attnviz.lecture.store.redis_store import RedisStore
from attnviz.server_settings import BALANCER_VARIABLE, STORE_URL_VARIABLE, ServerSettings, read_settings, settings_path

KNOWN = ("all-MiniLM-L6-v2", "toy", "tiny-llama", "toy-nopos")
ROOT = Path(__file__).resolve().parent.parent


def settings_from(tmp_path, text: str, environ=None) -> ServerSettings:
    path = tmp_path / "attnviz.toml"
    path.write_text(text, encoding="utf-8")
    return read_settings(path, KNOWN, environ or {})


def test_no_file_means_the_safe_defaults(tmp_path):
    settings = read_settings(tmp_path / "missing.toml", KNOWN, {})
    assert settings == ServerSettings()
    assert (settings.offered, settings.free_form, settings.behind_balancer) == (None, "local", False)
    assert settings.max_weights_bytes == 2_000_000_000 and settings.max_tokens == 512 and not settings.problems


def test_the_shipped_file_holds_the_defaults():
    settings = read_settings(settings_path(ROOT, {}), KNOWN, {})
    assert settings == ServerSettings() and not settings.problems


def test_settings_are_read(tmp_path):
    settings = settings_from(tmp_path, """
[models]
offered = ["toy", "tiny-llama"]
free_form = "nobody"
max_weights_gb = 0.5
[texts]
max_tokens = 64
[server]
behind_balancer = true
""")
    assert settings == ServerSettings(("toy", "tiny-llama"), "nobody", True, 0.5, 64)
    assert not settings.problems


def test_a_file_that_is_not_toml_gives_a_message_and_every_default(tmp_path):
    settings = settings_from(tmp_path, "[models\nfree_form = everyone")
    assert settings == ServerSettings()
    assert len(settings.problems) == 1 and "could not be read" in settings.problems[0]


def test_each_wrong_setting_is_named_and_takes_its_default(tmp_path):
    settings = settings_from(tmp_path, """
[models]
offered = ["toy", "gpt-7b"]
free_form = "students"
max_weights_gb = "lots"
[texts]
max_tokens = 12.5
""")
    assert settings == ServerSettings()
    text = "\n".join(settings.problems)
    for words in ("unknown: gpt-7b", "free_form must be one of 'local', 'everyone', 'nobody'", "max_weights_gb must be",
                  "max_tokens must be a whole number"):
        assert words in text
    assert len(settings.problems) == 4


def test_who_may_lecture_and_the_passphrase_are_read_and_a_wrong_one_is_named_never_quoted(tmp_path):
    settings = settings_from(tmp_path, '[lecture]\nlecturers = "passphrase"\npassphrase = " only lecturers know "\n'
                                       '[store]\nrooms_per_browser = 2\nplans_per_browser = 4\nidle_minutes = 30.0\n')
    assert (settings.lecturers, settings.lecture_passphrase) == ("passphrase", "only lecturers know")
    limits = settings.store_limits
    assert (limits.rooms_per_browser, limits.plans_per_browser, limits.idle_minutes) == (2, 4, 30.0)
    assert not settings.problems
    wrong = settings_from(tmp_path, '[lecture]\nlecturers = "students"\npassphrase = "short"\n')
    assert (wrong.lecturers, wrong.lecture_passphrase) == ("local", "")
    text = "\n".join(wrong.problems)
    assert "lecturers must be one of 'local', 'passphrase', 'everyone'" in text and "at least 8 characters" in text
    assert "short" not in text.replace("'short'", "")  # the passphrase itself is never in a message
    assert "short" not in text
    alone = settings_from(tmp_path, '[lecture]\nlecturers = "passphrase"\n')
    assert "needs lecture.passphrase: nobody may start a room" in "\n".join(alone.problems)


def test_the_balancer_variable_says_behind_a_balancer(tmp_path):
    assert settings_from(tmp_path, "", {BALANCER_VARIABLE: "1"}).behind_balancer
    assert not settings_from(tmp_path, "", {BALANCER_VARIABLE: "0"}).behind_balancer


def test_another_file_by_variable(tmp_path):
    assert settings_path(ROOT, {"ATTNVIZ_SETTINGS": str(tmp_path / "x.toml")}) == tmp_path / "x.toml"
    assert settings_path(ROOT, {}) == ROOT / ".streamlit" / "attnviz.toml"


# [server] public_url and the lecture store ([store], ATTNVIZ_STORE_URL)


def test_public_url_and_store_settings_are_read(tmp_path):
    settings = settings_from(tmp_path, """
[server]
public_url = "http://10.0.0.5:8501/"
[store]
backend = "redis"
url = "redis://:pw@10.0.0.5:6379/0"
answer_chars = 20
answers_per_minute = 5
rooms = 3
room_hours = 1
plans = 4
plan_bytes = 1000
link_chars = 500
link_days = 2.5
""")
    assert not settings.problems
    assert settings.public_url == "http://10.0.0.5:8501"  # without its trailing slash
    assert (settings.store_backend, settings.store_url) == ("redis", "redis://:pw@10.0.0.5:6379/0")
    assert settings.store_limits == StoreLimits(20, 5, 3, 1.0, 4, 500, 2.5, 1000)


def test_the_store_defaults_to_memory_with_the_contracts_limits(tmp_path):
    settings = settings_from(tmp_path, "")
    assert (settings.public_url, settings.store_backend, settings.store_url) == ("", "memory", "")
    assert settings.store_limits == StoreLimits()


def test_wrong_store_settings_are_named_and_take_their_defaults(tmp_path):
    settings = settings_from(tmp_path, """
[server]
public_url = "10.0.0.5:8501"
[store]
backend = "postgres"
rooms = 0
room_hours = "long"
answers_per_minute = 2.5
""")
    assert (settings.public_url, settings.store_backend) == ("", "memory")
    assert settings.store_limits == StoreLimits()
    text = "\n".join(settings.problems)
    for words in ("server.public_url must be the app's address", "store.backend must be one of 'memory', 'redis'",
                  "store.rooms must be a whole number above 0", "store.room_hours must be a number above 0",
                  "store.answers_per_minute must be a whole number"):
        assert words in text
    assert len(settings.problems) == 5


def test_redis_without_a_usable_url_falls_back_to_memory_and_never_shows_the_url(tmp_path):
    for url, words in (("", "store.url is missing"), ("http://:hunter2@host/", "store.url is not a Redis URL"),
                       ("redis://:hunter2@host:port/0", "store.url is not a Redis URL")):
        settings = settings_from(tmp_path, f'[store]\nbackend = "redis"\nurl = "{url}"\n')
        assert (settings.store_backend, settings.store_url) == ("memory", "")
        assert len(settings.problems) == 1 and words in settings.problems[0]
        assert "hunter2" not in settings.problems[0]
    for bad in ("javascript:alert(1)", "http://", "https://host/?q=1", 8501, "ftp://host"):
        settings = settings_from(tmp_path, f"[server]\npublic_url = {bad!r}\n".replace("'", '"'))
        assert settings.public_url == "" and "public_url" in settings.problems[0], bad


def test_the_store_url_variable_wins(tmp_path):
    url = "redis://:secret@127.0.0.1:7000/0"
    settings = settings_from(tmp_path, '[store]\nbackend = "memory"\n', {STORE_URL_VARIABLE: url})
    assert (settings.store_backend, settings.store_url) == ("redis", url) and not settings.problems
    settings = settings_from(tmp_path, "", {STORE_URL_VARIABLE: "nonsense"})
    assert settings.store_backend == "memory" and STORE_URL_VARIABLE in settings.problems[0]


def test_open_store_gives_one_store_per_process_for_the_same_settings(tmp_path):
    memory = settings_from(tmp_path, "[store]\nrooms = 7\n")
    store = open_store(memory)
    assert isinstance(store, MemoryStore) and store.limits.rooms == 7
    assert open_store(settings_from(tmp_path, "[store]\nrooms = 7\n")) is store  # every session shares it
    assert open_store(settings_from(tmp_path, "")) is not store
    redis_settings = settings_from(tmp_path, "", {STORE_URL_VARIABLE: "redis://:pw@127.0.0.1:1/0"})
    remote = open_store(redis_settings)
    assert isinstance(remote, RedisStore) and open_store(redis_settings) is remote
    with pytest.raises(StoreUnavailable):  # nothing listens on port 1
        remote.ping()
