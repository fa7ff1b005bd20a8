"""attnviz as a user installs it: the wheel built from the checkout, installed (not editable, --no-deps) into a fresh
virtual environment that cannot see the checkout, then used from a temporary folder with no PYTHONPATH and the hub
offline: __version__, every shipped model by name, the example notebook in a real kernel of that environment, and
show() on a transformers output_attentions tuple and on an encoder–decoder's three attentions.

The fresh environment reuses this environment's third-party packages (torch, transformers, ...) through a .pth file
naming this environment's site-packages, so nothing is downloaded; it holds no attnviz until the wheel is installed
(checked first). The findings come from tests/packaging/check_installed.py, run with the fresh environment's python.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import attnviz

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "attnviz-wheel"  # the kernelspec installed into the fresh environment


def run(args: list, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def user_env(home: Path) -> dict:
    """The environment of a user's shell: no PYTHONPATH (nothing points at the checkout), the hub offline."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", JUPYTER_PLATFORM_DIRS="1", HOME=str(home))
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """attnviz's wheel, built from a copy of the checkout's package files (the build leaves nothing in the checkout)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "LICENSE", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "attnviz", src / "attnviz", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", dist, src],
        cwd=src)
    (built,) = dist.glob("attnviz-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> dict:
    """The findings of check_installed.py in a fresh environment with the wheel installed."""
    venv, home, work = (tmp_path_factory.mktemp(n) for n in ("venv", "home", "work"))
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=work)
    python = venv / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}  # this environment's packages
    (site / "reuse_parent_packages.pth").write_text("\n".join(sorted(ours)) + "\n")
    env = user_env(home)
    before = subprocess.run([python, "-c", "import attnviz"], cwd=work, env=env, capture_output=True, text=True)
    assert before.returncode != 0 and "No module named 'attnviz'" in before.stderr, "the fresh environment sees attnviz"
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=work, env=env)
    run([python, "-m", "ipykernel", "install", "--prefix", venv, "--name", KERNEL], cwd=work, env=env)
    shutil.copy(ROOT / "notebooks" / "attnviz_in_a_notebook.ipynb", work / "example.ipynb")
    shutil.copy(Path(__file__).parent / "check_installed.py", work / "check_installed.py")
    done = run([python, "check_installed.py", work / "example.ipynb", work, KERNEL], cwd=work, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"site": str(site), "python": str(python)}


def test_the_wheel_holds_the_package_and_its_data_alone(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    ours = {p.relative_to(ROOT).as_posix() for p in (ROOT / "attnviz").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert ours <= names, sorted(ours - names)[:10]  # every module, model, plan, picture, corpus, JS and CSS file
    assert any(n.endswith("assets/models/attnviz-tiny-llama/model.safetensors") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.split("/")[0] in ("ui", "app_pages", "deploy", "tests", "assets", "notebooks") for n in names)
    metadata = zipfile.ZipFile(wheel).read(f"attnviz-{attnviz.__version__}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Requires-Dist: torch==2.13.0" in metadata
    assert 'Requires-Dist: anywidget<0.12,>=0.9; extra == "notebook"' in metadata


def test_the_installed_package_is_imported_with_its_version(installed):
    assert installed["version"] == attnviz.__version__
    assert installed["attnviz_file"].startswith(installed["site"])  # the wheel's copy, not the checkout's
    assert Path(installed["python"]).parent.parent in Path(installed["attnviz_file"]).parents


def test_every_shipped_model_loads_by_name_offline_and_runs(installed):
    models = installed["models"]
    assert set(models) == {"all-MiniLM-L6-v2", "toy", "toy-nopos", "tiny-llama", "tiny-bart", "gru-bottleneck",
                           "gru-attention"}
    for name, result in models.items():
        if name.startswith("gru-"):
            assert result == "42", name
        else:
            shape, row_sum = result
            assert len(shape) == 4 and row_sum == pytest.approx(1.0, abs=1e-5), name


def test_show_takes_a_transformers_tuple_and_an_encoder_decoders_three_attentions(installed):
    assert installed["bert_tuple"] > 0 and installed["bert_output"] > 0 and installed["bert_html"] > 0
    assert installed["seq2seq_sets"] == ["cross-attention (decoder queries → encoder keys)", "decoder self-attention",
                                         "encoder self-attention"]
    assert installed["seq2seq_same"]  # bertviz's names and the output as it comes draw the same cells


def test_the_example_notebook_runs_in_a_kernel_of_the_fresh_environment(installed):
    assert installed["notebook_errors"] == []
    kernel_python, kernel_attnviz = installed["kernel_says"]
    assert Path(kernel_python).parent.parent == Path(installed["python"]).parent.parent  # the fresh environment's
    assert kernel_attnviz.startswith(installed["site"])
    assert installed["notebook_widgets"] == 6 and installed["notebook_html"]


def test_the_suite_tests_the_checkouts_attnviz():
    # pyproject's pytest pythonpath puts the checkout first: an installed attnviz elsewhere must not stand in for it
    assert Path(attnviz.__file__).resolve().parent == ROOT / "attnviz"
