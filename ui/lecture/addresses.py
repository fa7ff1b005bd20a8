"""The address the class can reach, for the QR codes and links a lecturer shows: the settings' public URL when
given, else the address the lecturer's browser shows, unless that is this machine's own (loopback) and the server
has a network address: the class server's (its balancer's, which it gives its processes) or Streamlit's own
"Network URL". A loopback address is said plainly, with how to start the app for a class (loopback_warning)."""

from __future__ import annotations

import os

import streamlit as st

from attnviz.lecture import is_loopback, students_base
from attnviz.lecture.store import StoreError
from ui import streamlit_private
from ui.access import server_settings
from ui.short_links import short_link

ALL_INTERFACES = ("", "0.0.0.0", "::")
CLASS_URL_VARIABLE = "ATTNVIZ_CLASS_URL"  # deploy/class_server.py sets it: its balancer's address
SHORT_ABOVE = 120  # a longer view link is put in the store and its QR code encodes ?v=<id> (a small, sparse code)


def network_url() -> str:
    """The class server's address when this process is one of its own, else Streamlit's own network address (as
    `streamlit run` prints it); "" when that is loopback (a server bound to 127.0.0.1) or there is no network."""
    class_url = os.environ.get(CLASS_URL_VARIABLE, "").strip()
    if class_url:
        return "" if is_loopback(class_url) else class_url.rstrip("/")
    address = str(st.get_option("server.address") or "")
    port = st.get_option("server.port")
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    if address in ALL_INTERFACES:
        address = streamlit_private.internal_ip()
    url = f"http://{address}:{port}" + (f"/{base}" if base else "") if address else ""
    return "" if not url or is_loopback(url) else url


def public_url() -> str:
    """The settings' public address of the app (server.public_url; "" when not given)."""
    return server_settings().public_url


def class_base(page: str) -> str:
    """The app's address for the class, from the page at URL path `page` ("" = the default page)."""
    return students_base(public_url(), st.context.url or "", network_url(), page)


def loopback_warning(base: str, where=st) -> bool:
    """When `base` is this machine's own address: say so, and how to start the app for a class (True)."""
    if not is_loopback(base):
        return False
    where.warning(f"This address ({base}) is this computer's own: no student's phone can open it. For a class, "
                  "start the app so that the network reaches it: `streamlit run app.py --server.address 0.0.0.0` "
                  "(then open it by this computer's network address), or `python deploy/class_server.py`; or set "
                  "`public_url` in .streamlit/attnviz.toml to the address students use.", icon=":material/wifi_off:")
    streamlit_private.say_missing("network", where)  # a Streamlit whose network address attnviz cannot read
    return True


def short_view_link(page_url: str, query: str) -> str:
    """A view's link for a QR code: as is when short, else `page_url?v=<id>` with the query kept in the store (the
    app opens such a link with the view's settings). The long link when the store cannot keep it."""
    link = page_url + (f"?{query}" if query else "")
    if len(link) <= SHORT_ABOVE:
        return link
    try:
        return f"{page_url}?{short_link(query)}"
    except StoreError:
        return link
