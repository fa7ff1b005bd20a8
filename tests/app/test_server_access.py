"""What a browser may ask of the server, in Streamlit's AppTest: a browser not on the server's machine is offered
no free-form model and gets one refusal whatever a crafted link names; the settings' allow-list holds in the
sidebar and on Compare's side B; a 7B config is refused before any load."""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from apptest_helpers import assert_healthy, page_text, run_app
from big_configs import LLAMA_7B

from attnviz.engine.models import loading
from attnviz.server_settings import ServerSettings
from ui import access

COMPARE = "app_pages/compare.py"
TEXT = "the cat sat on the mat"


@pytest.fixture
def remote_browser(monkeypatch):
    """A browser on another machine: st.context.ip_address names its address (a documentation address here)."""
    monkeypatch.setattr(access, "client_address", lambda: "192.0.2.7")


def settings(monkeypatch, **values) -> None:
    monkeypatch.setattr(access, "server_settings", lambda: ServerSettings(**values))


def errors(at) -> list[str]:
    return [str(e.value) for e in at.error]


def test_a_remote_browser_is_offered_no_free_form_field(remote_browser):
    at = run_app({"text": TEXT})
    assert_healthy(at)
    assert "other" not in at.selectbox(key="model").options
    assert at.selectbox(key="model").options[:2] == ["all-MiniLM-L6-v2", "toy"]
    assert not [t for t in at.text_input if t.key == "model_path"]


def test_the_local_browser_is_offered_the_free_form_field():
    at = run_app({"text": TEXT, "model": "other"})
    assert "other" in at.selectbox(key="model").options
    assert [t for t in at.text_input if t.key == "model_path"]


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "127.0.0.2", "::1"])
def test_a_browser_on_the_servers_machine_is_local_however_its_address_is_written(monkeypatch, address):
    """Plain `streamlit run app.py` listens on IPv4 and IPv6: a browser opened at http://127.0.0.1:8501 arrives as
    ::ffff:127.0.0.1, which Streamlit does not call loopback. The lecturer at the server was told to lecture from
    the server's own machine, and offered no free-form model."""
    monkeypatch.setattr(access, "client_address", lambda: address)
    at = run_app({"text": TEXT, "model": "other"})
    assert "other" in at.selectbox(key="model").options
    lecture = run_app({"lecture": "attention"}, page="app_pages/lecture.py")
    assert "lecture_start" in [b.key for b in lecture.button]


@pytest.mark.parametrize("address", ["::ffff:192.0.2.7", "192.0.2.7", "2001:db8::7", "not an address"])
def test_a_browser_on_another_machine_is_not_local_however_its_address_is_written(monkeypatch, address):
    monkeypatch.setattr(access, "client_address", lambda: address)
    assert "other" not in run_app({"text": TEXT}).selectbox(key="model").options


def test_a_crafted_link_gets_one_refusal_for_an_existing_and_a_missing_folder(remote_browser, tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "load_folder", lambda *a, **k: pytest.fail("a refused model must not be loaded"))
    (tmp_path / "config.json").write_text("{}")
    answers = {}
    for path in (str(tmp_path), "/no/such/folder", "/etc", "gpt2"):
        at = run_app({"model": "other", "model_path": path, "text": TEXT})
        assert_healthy(at)
        answers[path] = errors(at)
        assert path not in page_text(at)
    assert len({tuple(a) for a in answers.values()}) == 1, answers
    (refusal,) = answers["/etc"]
    assert "offers these models: all-MiniLM-L6-v2" in refusal and "server's own machine" in refusal


def test_a_crafted_model_in_the_link_tells_the_local_browser_where_other_models_are_named():
    at = run_app({"model": "../../etc", "text": TEXT})
    assert_healthy(at)
    said = " ".join(errors(at) + [str(w.value) for w in at.warning])
    assert "named under 'other' in the Model picker" in said, said
    assert "server's own machine" not in said  # this browser is on it: that would be untrue
    assert not at.toast  # the picker's own message, not a second one (ui/link_read.py)


def test_behind_the_balancer_free_form_is_off_even_for_a_loopback_address(monkeypatch):
    settings(monkeypatch, behind_balancer=True)
    at = run_app({"model": "other", "model_path": "/etc", "text": TEXT})
    assert "other" not in at.selectbox(key="model").options
    assert any("turned off on this class server" in e for e in errors(at))


def test_everyone_may_name_other_models_when_the_settings_say_so(remote_browser, monkeypatch):
    settings(monkeypatch, free_form="everyone", behind_balancer=True)
    at = run_app({"model": "other", "model_path": "/no/such/folder", "text": TEXT})
    assert "other" in at.selectbox(key="model").options
    assert any("No folder at" in e for e in errors(at))


def test_the_allow_list_holds_in_the_sidebar_and_on_side_b(monkeypatch):
    settings(monkeypatch, offered=("toy", "tiny-llama"), free_form="nobody")
    at = run_app({"text": TEXT, "model": "all-MiniLM-L6-v2", "cmp_b_model": "other", "cmp_b_model_path": "/etc"},
                 page=COMPARE)
    assert_healthy(at)
    assert at.selectbox(key="model").options == ["toy", "tiny-llama"]
    assert at.selectbox(key="cmp_b_model").options == ["toy", "tiny-llama"]
    assert at.selectbox(key="model").value == "toy"  # the link's model is not offered: the first offered one
    assert "/etc" not in page_text(at)


def test_side_b_of_a_remote_browser_gets_the_same_refusal(remote_browser, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    refusals = []
    for path in (str(tmp_path), "/no/such/folder"):
        at = run_app({"text": TEXT, "model": "toy", "cmp_b_model": "other", "cmp_b_model_path": path}, page=COMPARE)
        assert_healthy(at)
        assert "other" not in at.selectbox(key="cmp_b_model").options
        refusals.append([e for e in errors(at) if "offers these models" in e])
    assert refusals[0] == refusals[1] and len(refusals[0]) == 1


def test_a_7b_config_is_refused_before_any_load(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_7B))
    monkeypatch.setattr(loading, "load_folder", lambda *a, **k: pytest.fail("a model over the cap must not be loaded"))
    at = run_app({"model": "other", "model_path": str(tmp_path), "text": TEXT})
    assert_healthy(at)
    assert any("about 27.0 GB of float32 weights" in e and "at most 2.0 GB" in e for e in errors(at)), errors(at)


def test_a_text_over_the_token_cap_is_not_run(monkeypatch):
    settings(monkeypatch, max_tokens=8)
    at = run_app({"text": "one two three four five six seven eight nine ten"})
    assert_healthy(at)
    assert "this server runs texts of at most 8" in page_text(at)
