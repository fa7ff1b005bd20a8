"""The server's settings file: defaults when silent, a clear message and the default when wrong."""

from pathlib import Path

from attnviz.server_settings import BALANCER_VARIABLE, ServerSettings, read_settings, settings_path

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


def test_the_balancer_variable_says_behind_a_balancer(tmp_path):
    assert settings_from(tmp_path, "", {BALANCER_VARIABLE: "1"}).behind_balancer
    assert not settings_from(tmp_path, "", {BALANCER_VARIABLE: "0"}).behind_balancer


def test_another_file_by_variable(tmp_path):
    assert settings_path(ROOT, {"ATTNVIZ_SETTINGS": str(tmp_path / "x.toml")}) == tmp_path / "x.toml"
    assert settings_path(ROOT, {}) == ROOT / ".streamlit" / "attnviz.toml"
