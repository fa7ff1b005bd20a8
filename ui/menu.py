"""The app's pages as app.py's navigation lists them, for code that must know them at run time (a lecture plan's
steps name pages by their URL path). app.py hands its PAGES over on every run; nothing here imports app.py."""

from __future__ import annotations

MENU: dict[str, tuple[str, object]] = {}  # url_path ("" = the default page) -> (title, its st.Page)


def remember_menu(pages: dict[str, list]) -> None:
    """app.py's PAGES ({section: [st.Page, ...]}): the pages this server's navigation offers."""
    global MENU
    # a new dict, swapped in whole: another session's thread reading the menu meanwhile sees the old one or the
    # new one, never one being refilled
    MENU = {page.url_path: (page.title, page) for section in pages.values() for page in section}


def page_titles() -> dict[str, str]:
    """url_path -> title of every page in the menu ("" is the default page, the explorer)."""
    return {path: title for path, (title, _) in MENU.items()}
