"""Shared pytest fixtures. Group fixtures by area under a header comment; keep each group small."""

import gc
import os
import sys

# Before anything imports transformers or huggingface_hub: they read these once, at import time.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest
from file_times import file_times_lines
from streamlit_servers import stop_shared_server

# torch, transformers (helpers_tiny_models) and attnviz are imported where they are used (noqa: PLC0415 below), not
# here: a run's controller loads this file before it starts its workers, and runs no test. Imported here, they cost it
# 2.5 s before the first worker started, and every worker imports them again.

# One torch thread in every test process and in every server a test starts (they inherit the environment).
# - The suite runs four pytest workers beside Streamlit servers and Chromium on a 2-core machine: a second torch
#   thread per process only spins waiting for a core another process holds. With two, one 7-second test (200
#   greedy decodes of the tiny BART) ran past its 300-second timeout inside the full suite.
# - AppTest runs app.py in this process, and app.py sets torch's threads (attnviz.engine.device.server_threads):
#   a fixture computed before that and a page computed after would sum in a different order and differ in the 7th
#   digit, which the pages' printed figures show. So one thread count for the whole run.
os.environ.setdefault("ATTNVIZ_TORCH_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config):
    """torch's thread count, in every process that runs tests: a worker, or the one process of a run without workers
    (-n 0). The controller of workers runs none (it only hands them files)."""
    if config.getoption("numprocesses", default=None) and not hasattr(config, "workerinput"):
        return
    import torch  # noqa: PLC0415 - see the note on imports above

    torch.set_num_threads(int(os.environ["ATTNVIZ_TORCH_THREADS"]))


def pytest_collection_finish(session):
    """Python's cyclic garbage collector tuned for a test process: what is alive once the tests are collected (torch,
    transformers, streamlit and every test module) is frozen, never walked again, and a young collection comes after
    10,000 new objects, not 700. AppTest runs allocate without end: tests/app's link round trip, lecture, head claims
    and controls row files with tests/analysis, -n 0, took 44.2 and 46.1 busy CPU-s, and 41.4 and 41.0 so (2026-11-27).
    This changes when unreachable objects are freed, not what any test computes."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


# ---- engine: models (tests/test_parity.py, test_multihead.py, test_engine_errors.py) ---------


def loaded(spec: str | None = None):
    """attnviz.load_model(spec), for the model fixtures below."""
    import attnviz  # noqa: PLC0415 - see the note on imports above

    return attnviz.load_model(spec)


@pytest.fixture(scope="module")
def bundled_model():
    """The bundled all-MiniLM-L6-v2, loaded once per test module (never mutated by tests)."""
    return loaded()


@pytest.fixture(scope="session")
def tiny_model_folder(tmp_path_factory):
    """family -> a folder holding a seeded tiny random HF model of that family plus its tokenizer.

    Built once per session on first use: saving is cheap, but four families add up.
    """
    from helpers_tiny_models import save_tiny_model  # noqa: PLC0415 - see the note on imports above

    folders = {}

    def get(family: str):
        if family not in folders:
            folders[family] = save_tiny_model(family, tmp_path_factory.mktemp(f"tiny-{family}"))
        return folders[family]

    return get


# ---- pages: the two models the AppTests compare against (loaded once per test module) ------------


@pytest.fixture(scope="module")
def minilm():
    return loaded()


@pytest.fixture(scope="module")
def toy():
    return loaded("toy")


@pytest.fixture(scope="module")
def tiny_llama():
    """attnviz's own trained causal model, shipped in attnviz/assets/models/ (the KV-cache and induction pages use it)."""
    return loaded("attnviz-tiny-llama")


# ---- engine: Llama-family decoders (tests/engine/test_parity_llama.py, test_generation.py) --------


@pytest.fixture(scope="session")
def tiny_decoder_folder(tmp_path_factory):
    """name (see helpers_tiny_models.TINY_DECODERS, or 'llama-legacy') -> a folder with a seeded tiny causal LM."""
    from helpers_tiny_models import save_tiny_decoder  # noqa: PLC0415 - see the note on imports above

    folders = {}

    def get(name: str):
        if name not in folders:
            legacy = name == "llama-legacy"
            folder = tmp_path_factory.mktemp(f"tiny-{name}")
            folders[name] = save_tiny_decoder("llama" if legacy else name, folder, legacy_rope=legacy)
        return folders[name]

    return get


# ---- order: the longest files first, the browser files back to back (one Chromium per worker) ---------------------

# the folders of the longest files, handed out in this order before the rest (which follow in path order)
LONG_FIRST = ("browser", "deploy", "packaging", "app")
# in tests/browser/, its three longest files before the others (every run prints each file's seconds, slowest first:
# 355-368, 244-257 and 121-128 s on 2026-11-28), so that none of them starts late in the run
LONGEST_BROWSER = ("test_browser_lecture_walk.py", "test_browser.py", "test_browser_keyboard.py")


def pytest_collection_modifyitems(session, config, items):
    """Files handed out longest first: tests/browser/'s, then those of the other folders in LONG_FIRST, each file's
    tests together and in order. pytest-xdist hands a worker whole files in this order (pyproject.toml turns off its
    own reordering, by number of tests, which ran the five tests of the two-minute lecture walk after 150 other files),
    so a worker runs its browser modules back to back, one Chromium (tests/browser/conftest.py) serving them all, closed
    before the worker's first test that is not a browser test; and no long file starts last."""
    rank = {folder: i for i, folder in enumerate(LONG_FIRST)}
    first = {name: i for i, name in enumerate(LONGEST_BROWSER)}
    items.sort(key=lambda item: (rank.get(item.path.parent.name, len(LONG_FIRST)),
                                 first.get(item.path.name, len(LONGEST_BROWSER))))


def pytest_runtest_setup(item):
    """Before a test outside tests/browser/: the browser modules' shared Chromium closed (its Playwright keeps an
    asyncio loop running in this thread, which AppTest cannot share). Read from sys.modules: a run without browser
    tests never imports Playwright (the GPU machine has none)."""
    helpers = sys.modules.get("browser_helpers")
    if helpers is not None and item.path.parent.name != "browser":
        helpers.close_shared_chromium()


def pytest_sessionfinish(session, exitstatus):
    helpers = sys.modules.get("browser_helpers")
    if helpers is not None:
        helpers.close_shared_chromium()
    if not hasattr(session.config, "workerinput"):  # the controller, after its workers: the browser server they shared
        # the run's base temporary folder, in which the workers' lie (pytest's tmp_path_factory; no fixture here)
        stop_shared_server(session.config._tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Each test file's seconds, slowest first (tests/file_times.py): where the suite's time goes, in CI's output."""
    # every phase's report: passed setups and teardowns are kept under the category ""
    reports = [r for kept in terminalreporter.stats.values() for r in kept if getattr(r, "when", None)]
    if reports:
        terminalreporter.write_sep("=", "seconds per test file, slowest first (summed over its tests' phases)")
        for line in file_times_lines(reports):
            terminalreporter.write_line(line)
