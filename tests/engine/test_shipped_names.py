"""load_model takes the names the app's pickers show, offline from the package (attnviz/engine/shipped.py is the one
registry of the models attnviz ships); a bare name that is none of them and that the hub cannot give is refused with
the names that load offline."""

from __future__ import annotations

import pytest

import attnviz
from attnviz.engine.gru_seq2seq import GRUSeq2Seq
from attnviz.engine.models import Model, loading
from attnviz.engine.models.catalog import OFFERED, load_spec
from attnviz.engine.shipped import GRU, SHIPPED, short_names
from attnviz.errors import AttnvizError
from attnviz.paths import MODELS

SHORT = {"tiny-llama": "attnviz-tiny-llama", "tiny-bart": "attnviz-tiny-bart", "gru-bottleneck": "attnviz-gru-bottleneck",
         "gru-attention": "attnviz-gru-attention"}


@pytest.fixture
def no_hub(monkeypatch):
    """Any attempt to reach the hub fails the test."""
    monkeypatch.setattr(loading, "download_from_hub", lambda name: pytest.fail(f"'{name}' was sent to the hub"))


def test_the_registry_is_every_folder_the_package_ships():
    assert sorted(p.name for p in MODELS.iterdir() if p.is_dir()) == sorted(SHIPPED)
    assert short_names() == list(SHORT)


@pytest.mark.parametrize("short", sorted(SHORT))
def test_each_shipped_model_loads_by_its_short_and_full_name(short, no_hub):
    for name in (short, SHORT[short], short.upper()):
        model = attnviz.load_model(name)
        assert model.name == SHORT[short]
        if SHIPPED[SHORT[short]].kind == GRU:
            assert isinstance(model, GRUSeq2Seq) and model.translate("seven").output_text == "7"
        else:
            assert isinstance(model, Model) and model.run("one two three").attentions.ndim == 4


@pytest.mark.parametrize("name", sorted(OFFERED))
def test_every_name_a_picker_shows_loads_by_that_name(name, no_hub):
    model = attnviz.load_model(name)
    assert isinstance(model, Model)
    assert model.name == load_spec(OFFERED[name].spec).name  # the same model the page loads


def test_toy_nopos_is_the_toy_without_positions():
    model = attnviz.load_model("toy-nopos")
    res = model.run("a b a")
    first, second = [i for i, t in enumerate(res.tokens) if t == "a"]
    assert model.name == "toy (no positions)"
    # without positions the two a's are the same vector, so in layer 0 they attend alike
    assert res.attentions[0, :, first].allclose(res.attentions[0, :, second])
    with_positions = attnviz.load_model("toy").run("a b a")
    assert not with_positions.attentions[0, :, first].allclose(with_positions.attentions[0, :, second])


@pytest.mark.parametrize("name", ["tiny-lama", "gpt2", "bert-base-uncased"])
def test_an_unknown_bare_name_names_the_shipped_ones_when_the_hub_cannot_give_it(name):
    # the tests run offline (HF_HUB_OFFLINE=1, tests/conftest.py): a bare name is tried at the hub, as docs/library.md's
    # load_model("gpt2") promises, and the hub's refusal comes with the names that load offline
    with pytest.raises(AttnvizError) as err:
        attnviz.load_model(name)
    said = str(err.value)
    assert name in said and "hub" in said
    for offered in ("all-MiniLM-L6-v2", "toy", "toy-nopos", *SHORT):
        assert offered in said


def test_a_picker_spec_naming_a_gru_is_refused_with_a_reason():
    with pytest.raises(AttnvizError, match="no attention heads"):
        load_spec("gru-attention")
