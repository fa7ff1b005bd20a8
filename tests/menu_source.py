"""app.py's menu read from its source, without running it (app.py is a Streamlit script): its pages, in teaching
order, and the sections that list them. Shared by the AppTest helpers and the browser helpers (which open pages from
the header menu by their section)."""

from __future__ import annotations

import re
from pathlib import Path

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = r'st\.Page\("(app_pages/(\w+)\.py)",(?:\s*url_path="(\w+)",)?\s*title="([^"]+)"[^)]*\)'  # one of app.py's pages
SECTION = r'^ +"([^"]+)": \[\s*$'  # a section of app.py's PAGES: its name, then its pages


def app_menu() -> list[tuple[str, str, str]]:
    """app.py's pages in menu order: (file, URL path, title); the default page's URL path is ""."""
    text = Path(APP).read_text(encoding="utf-8")
    return [(m[1], "" if "default=True" in m[0] else m[3] or m[2], m[4]) for m in re.finditer(PAGE, text)]


def menu_sections() -> dict[str, list[str]]:
    """app.py's menu sections in order: section name -> the URL paths of its pages, in menu order."""
    parts = re.split(SECTION, Path(APP).read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {name: ["" if "default=True" in m[0] else m[3] or m[2] for m in re.finditer(PAGE, body)]
            for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def menu_section(path: str) -> str:
    """The menu section that lists the page at this URL path ("" is the explorer)."""
    return next(name for name, paths in menu_sections().items() if path in paths)
