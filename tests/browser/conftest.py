"""The real-browser tests' shared server: one `streamlit run app.py` per test process."""

from pathlib import Path

import browser_helpers
import pytest
from browser_helpers import CHROMIUM, ROOT, WorkerChromium, streamlit_server

ARTIFACTS = ROOT / "test-artifacts"  # screenshots for a person to look at


@pytest.fixture(scope="session")
def server():
    """One server per test process (each pytest-xdist worker), shared by its browser modules. A server's start and
    its pages' first, cold runs (model loads, transformers' import, the corpus scores) cost seconds to minutes of
    CPU each time: one per module made 25 of them per run on a 2-core machine. A cold server is still met: by the
    first module each worker runs, and on purpose in tests/deploy (test_cold_start.py, the class server's tests).
    Modules leave it as they found it: each room, short link and answer is their own."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: run tests/install_browser.sh"
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module", autouse=True)
def one_chromium_per_worker(request):
    """A test process's browser modules share one Chromium and one tab (chromium_page), emptied between tests
    (browser_helpers.WorkerChromium). The Chromium stays open for the next browser module (tests/conftest.py runs
    them back to back and closes it before any other test); a module that says ONE_CHROMIUM = False (it runs AppTest,
    asyncio or its own sync_playwright too) closes it first and gets a Chromium per page."""
    if not getattr(request.module, "ONE_CHROMIUM", True):
        browser_helpers.close_shared_chromium()
        yield
        return
    if browser_helpers.worker_chromium is None:
        browser_helpers.worker_chromium = WorkerChromium()
    yield
