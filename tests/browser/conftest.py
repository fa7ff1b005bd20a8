"""The real-browser tests' shared server: one `streamlit run app.py` per test module."""

from pathlib import Path

import pytest
from browser_helpers import CHROMIUM, ROOT, streamlit_server

ARTIFACTS = ROOT / "test-artifacts"  # screenshots for a person to look at


@pytest.fixture(scope="module")
def server():
    """A fresh server for the module (fresh caches: each module sees the app as a new class would)."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: run tests/install_browser.sh"
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server() as url:
        yield url
