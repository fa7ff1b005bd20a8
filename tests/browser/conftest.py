"""The real-browser tests' shared server (one `streamlit run app.py` per run) and shared Chromium (one per test process)."""

from pathlib import Path

import browser_helpers
import pytest
from axe_walks import run_folder
from browser_helpers import CHROMIUM, ROOT, WorkerChromium
from streamlit_servers import shared_streamlit_server, streamlit_server

ARTIFACTS = ROOT / "test-artifacts"  # screenshots for a person to look at


@pytest.fixture(scope="session")
def server(tmp_path_factory, worker_id):
    """One server for the run's browser modules, shared by its test processes (pytest-xdist's workers; with -n 0, the
    one process's own). A server's start and its pages' first, cold runs (model loads, transformers' import, the corpus
    scores) cost about 21 s of CPU each time (a walk of every page, 2026-11-27: 18.6 s of server CPU cold, 2.4 s warm):
    a server per worker paid that three times. A cold server is still met: by the first module that asks, and on
    purpose in tests/deploy (test_cold_start.py, the class server's tests) and test_browser.py's fresh server.
    Modules leave it as they found it, and share it with other processes' modules running at the same time: each room,
    short link and answer is their own."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: run tests/install_browser.sh"
    ARTIFACTS.mkdir(exist_ok=True)
    if worker_id == "master":  # no workers: this process's own server, stopped at its end
        with streamlit_server() as url:
            yield url
        return
    yield shared_streamlit_server(tmp_path_factory.getbasetemp().parent)  # stopped by the controller (tests/conftest.py)


@pytest.fixture(scope="module", autouse=True)
def one_chromium_per_worker():
    """A test process's browser modules share one Chromium and one tab (chromium_page), emptied between tests
    (browser_helpers.WorkerChromium); a test that needs several people opens their contexts in it (people_browser).
    The Chromium stays open for the next browser module (tests/conftest.py runs them back to back and closes it before
    any other test)."""
    if browser_helpers.worker_chromium is None:
        browser_helpers.worker_chromium = WorkerChromium()
    yield


@pytest.fixture(scope="session")
def axe_run_folder(tmp_path_factory, worker_id):
    """The folder the run's test processes share, where the axe walks file the listed faults they met
    (tests/axe_walks.py)."""
    return run_folder(tmp_path_factory, worker_id)
