"""AppTest stands for the lecturer's own browser, on the server's machine."""

import pytest
from streamlit import config

from ui import access


@pytest.fixture(autouse=True)
def browser_on_the_server_machine(monkeypatch):
    """AppTest has no browser connection (st.context.ip_address is a mock there): the address a loopback
    connection gives, None. tests/app/test_server_access.py sets another to play a student's browser."""
    monkeypatch.setattr(access, "client_address", lambda: None)


@pytest.fixture(autouse=True)
def server_on_loopback_only():
    """As the browser tests start it (--server.address 127.0.0.1): the lecture's addresses stay on loopback (no
    network address of this machine in a test's QR code or link)."""
    before = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    yield
    config.set_option("server.address", before)
