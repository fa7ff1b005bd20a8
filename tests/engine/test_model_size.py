"""A model's size as float32 is known before anything is downloaded or loaded, and a cap refuses a big one."""

import json

import pytest
import torch
from big_configs import GPT2, LLAMA_7B
from safetensors.torch import save_file

import attnviz
from attnviz.engine.models import loading, size
from attnviz.engine.models.size import config_parameters, folder_float32_bytes, safetensors_file_parameters
from attnviz.errors import AttnvizError

CAP = 2_000_000_000


def never(*args, **kwargs):
    raise AssertionError("nothing may be downloaded or loaded for a model over the cap")


def test_a_safetensors_header_gives_the_parameter_count(tmp_path):
    save_file({"a": torch.zeros(3, 4), "b": torch.zeros(5, dtype=torch.float16)}, str(tmp_path / "model.safetensors"))
    assert safetensors_file_parameters(tmp_path / "model.safetensors") == 17
    assert folder_float32_bytes(tmp_path) == 17 * 4


def test_a_file_that_is_not_safetensors_is_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 8 + b"{}")
    with pytest.raises(AttnvizError, match="not a valid safetensors"):
        folder_float32_bytes(tmp_path)


def test_config_estimates_are_near_the_known_counts():
    assert config_parameters(LLAMA_7B) == pytest.approx(6.74e9, rel=0.05)
    assert config_parameters(GPT2) == pytest.approx(124e6, rel=0.1)


def test_a_7b_config_without_weights_is_refused_before_any_load(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_7B))
    monkeypatch.setattr(loading, "load_folder", never)
    monkeypatch.setattr(loading, "download_from_hub", never)
    with pytest.raises(AttnvizError, match=r"about 27\.0 GB of float32 weights.*at most 2\.0 GB"):
        attnviz.load_model(str(tmp_path), max_bytes=CAP)


def test_a_7b_hub_model_is_refused_from_its_metadata_before_any_download(monkeypatch):
    class Metadata:
        parameter_count = {"BF16": 7_241_732_096}

    # the names as the engine imported them (at the top of its modules)
    monkeypatch.setattr(size, "get_safetensors_metadata", lambda name, **kw: Metadata())
    monkeypatch.setattr(loading, "snapshot_download", never)
    monkeypatch.setattr(loading, "load_folder", never)
    with pytest.raises(AttnvizError, match=r"about 29\.0 GB"):
        attnviz.load_model("mistralai/Mistral-7B-v0.1", max_bytes=CAP)


def test_a_small_folder_under_the_cap_loads(tiny_model_folder):
    model = attnviz.load_model(str(tiny_model_folder("bert")), max_bytes=CAP)
    assert model.n_layers >= 1


def test_without_a_cap_nothing_is_measured(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_7B))
    monkeypatch.setattr(loading, "folder_float32_bytes", never)
    with pytest.raises(AttnvizError, match="no .safetensors"):  # the loader's own message: no size check ran
        attnviz.load_model(str(tmp_path))
