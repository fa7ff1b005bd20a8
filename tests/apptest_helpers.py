"""Driving the app in Streamlit's AppTest and reading back what it sent to the browser."""

from __future__ import annotations

import functools
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from menu_source import APP, app_menu, menu_section, menu_sections  # noqa: F401 - the tests' one import of them
from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.proto.Block_pb2 import Block as BlockProto
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from attnviz.draw.heatmap_payload import decode_payload
from attnviz.draw.heatmap_row import row_parts
from attnviz.draw.heatmap_switch import shown_payload, split_switch_payload

# Every new AppTest looks through the metadata of every installed package for Streamlit components before its first
# run (streamlit.testing.v1.app_test: BidiComponentManager.discover_and_register_components), and most tests make
# their own AppTest: 17 % of the link round trip's time was that scan. A served app scans once per process, at its
# start; the packages installed do not change during a test run, so the scan's answer is kept for the process. What
# each AppTest then registers from it is its own, as before.
_scan_once = functools.cache(manifest_scanner.scan_component_manifests)
manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_scan_once())

# Every AppTest run, a first run and each rerun after a click alike, makes a new ScriptCache
# (streamlit.testing.v1.app_test._run, local_script_runner), so app.py and the page were parsed, rewritten for magic
# and compiled again on every run: 19 % of the script runs' time in tests/app. A served app keeps one ScriptCache for
# its process and compiles a script once. Here the bytecode is kept for the process, keyed on the script's path, its
# source and the magic option: the same key gives the same bytecode, and an edited or new script is compiled anew.
_compile_script = ScriptCache.get_bytecode
_BYTECODE: dict[tuple, object] = {}


def _bytecode_once(self, script_path: str):
    path = os.path.abspath(script_path)
    key = (path, Path(path).read_bytes(), config.get_option("runner.magicEnabled"))
    if key not in _BYTECODE:
        _BYTECODE[key] = _compile_script(self, script_path)
    return _BYTECODE[key]


ScriptCache.get_bytecode = _bytecode_once


LECTURE_PAGES = ("lecture", "lecture_notes", "follow")  # the lecturer's tools: no lesson, no figures of their own


def lesson_menu() -> list[tuple[str, str, str]]:
    """app_menu() without the Lecture section's pages: the pages that teach (each draws figures)."""
    return [entry for entry in app_menu() if entry[1] not in LECTURE_PAGES]


def run_app(query: dict | None = None, page: str | None = None, timeout: float = 180,
            state: dict | None = None) -> AppTest:
    """The app run once, opened with these URL query params, on this page (default: the explorer); state: session
    state set before the run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    if page:
        at.switch_page(page)
        # st.Page names a page by the hash of its URL path, which is not its file name for every page
        # (app_pages/multihead.py keeps the old /multihead_anatomy): before a first run AppTest can only guess from
        # the file name, so it is told (a first run on another page would cost a whole explorer run per test)
        url_path = {file: path for file, path, _ in app_menu()}.get(page)
        if url_path:
            at._page_hash = calc_hash(url_path)
    return at.run()


def chart_specs(at: AppTest) -> dict[str, dict]:
    """key -> the plotly figure JSON of each st.plotly_chart on the page; heatmaps drawn by the canvas
    component (ui/heatmap_widget) are listed too, as {"heatmap": their payload's JSON block}, so 'is key drawn'
    checks keep working (read their numbers with drawn_heatmap / drawn_grid)."""
    specs = {c.key if hasattr(c, "key") else str(i): json.loads(c.proto.spec) for i, c in enumerate(at.get("plotly_chart"))}
    for key, payload in heatmap_payloads(at).items():
        specs.setdefault(key, {"heatmap": decode_payload(payload)[0]})
    return specs


def page_text(at: AppTest) -> str:
    """Every piece of text on the page that a user reads (markdown, latex, alerts, captions)."""
    parts = []
    for kind in ("markdown", "latex", "caption", "error", "warning", "info", "success", "title", "subheader"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return "\n".join(parts)


SCRIPTED = ("html", "bidi_component", "component_instance", "iframe")  # elements that carry code, not sentences


def readable_strings(node) -> list[str]:
    """Every string a reader meets under this node (at.main, at.sidebar): each element's text fields and those of
    its parts (a widget's label and help, a title's tooltip, an alert's body, a popover's label), not the code of
    its html and components."""
    found = []
    if getattr(node, "type", None) in SCRIPTED:
        return found
    proto = getattr(node, "proto", None)
    for field in (proto.ListFields() if hasattr(proto, "ListFields") else ()):
        value = field[1]
        if isinstance(value, str):
            found.append(value)
        elif hasattr(value, "ListFields"):  # a block's or widget's own message (its label, its help)
            found += [v for _, v in value.ListFields() if isinstance(v, str)]
    for child in getattr(node, "children", {}).values():
        found += readable_strings(child)
    return found


# "the sidebar's …" and the setting it names: written here, not taken from ui.page, so a sentence the app gets wrong
# cannot agree with the check. The layer and head pickers are never in the sidebar (they sit beside their figures).
SIDEBAR_WORDS = re.compile(r"sidebar(?:'s| has)? (custom mask|text box|model list|text|model|mask|scaling|layer|head)",
                           re.I)
SETTING_OF = {"custom mask": "mask", "text box": "text", "model list": "model", "text": "text", "model": "model",
              "mask": "mask", "scaling": "scale", "layer": "layer", "head": "head"}


def misplaced_settings(at: AppTest, in_row: set[str]) -> list[str]:
    """The sentences on the page that send a reader to the sidebar for a setting that is not there: one of
    `in_row` (on a projector, the row above the page), or the layer or head."""
    wrong = []
    for said in readable_strings(at.main) + readable_strings(at.sidebar):
        for found in SIDEBAR_WORDS.finditer(said):
            if SETTING_OF[found.group(1).lower()] in set(in_row) | {"layer", "head"}:
                wrong.append(said[max(0, found.start() - 80):found.end() + 40])
    return wrong


def assert_healthy(at: AppTest) -> None:
    """No exception element, and no NaN anywhere in the text a user reads."""
    assert not at.exception, [e.value for e in at.exception]
    assert "nan" not in page_text(at).lower().replace("nanoseconds", "").split(), page_text(at)


def heatmap_payloads(at: AppTest) -> dict[str, bytes]:
    """key -> the payload bytes of each heatmap component (ui/heatmap_widget) on the page."""
    out = {}
    for raw in drawn_payloads(at):
        raw = shown_payload(raw)  # a switch payload: the state drawn first
        if raw[:4] == b"AVHM":
            out[decode_payload(raw)[0]["name"]] = raw
    return out


def drawn_payloads(at: AppTest) -> list[bytes]:
    """Every payload the heatmap components on the page draw, a row payload's parts one by one."""
    return [part for element in at.get("bidi_component") for part in row_parts(element.proto.bytes)]


def switch_states(at: AppTest, key: str) -> tuple[str | None, dict[bool, tuple[dict, np.ndarray]]]:
    """The heatmap under this key in each state of the switch it carries: (the switch's widget key,
    {state: (its JSON block, values as drawn (panels, rows, cols))}); (None, {}) for a heatmap that carries none."""
    for raw in drawn_payloads(at):
        if raw[:4] in (b"AVHM", b"AVSW") and decode_payload(shown_payload(raw))[0]["name"] == key:
            control, states = split_switch_payload(raw)
            return control, {state: decode_payload(payload) for state, payload in states.items()}
    raise KeyError(key)


def drawn_grid(at: AppTest, key: str) -> dict[str, tuple[np.ndarray, list[str], list[str]]]:
    """What ui/heatmap.heatmap_grid drew under this key: panel title -> (values as drawn, rows, columns)."""
    meta, values = decode_payload(heatmap_payloads(at)[key])
    return {title: (values[p], meta["row_labels"], meta["col_labels"]) for p, title in enumerate(meta["titles"])}


def drawn_heatmap(at: AppTest, key: str) -> tuple[np.ndarray, list[str], list[str]]:
    """What ui/heatmap.heatmap drew under this key: (values as drawn, row labels, column labels).

    Weights come back in [0, 1] (to 1/65534 for uint16, 1/254 for uint8); signed matrices as drawn
    (to half a step of their range), −inf cells as -inf. KeyError when nothing was drawn under this key.
    """
    meta, values = decode_payload(heatmap_payloads(at)[key])
    return values[0], meta["row_labels"], meta["col_labels"]


def drawn_class_rows(at: AppTest, key: str = "lecture_class_row") -> tuple[np.ndarray, list[str], list[str]]:
    """The class-against-the-model heatmap (a phone's) as (values, rows, columns): the class's row and the model's."""
    return drawn_heatmap(at, key)


class _Cells(HTMLParser):
    """A table's rows as the text of their cells, in order."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def class_table(at: AppTest) -> list[list[str]]:
    """The projector's table of the class's answers beside the focus figure (ui/lecture/beside.py), as the text of
    each row's cells (its header row first). AssertionError when the page drew none."""
    bodies = [e.proto.body for e in at.get("html") if "class='tally" in e.proto.body]
    assert len(bodies) == 1, f"{len(bodies)} tables of the class's answers"
    cells = _Cells()
    cells.feed(bodies[0])
    return cells.rows


def class_column_share(at: AppTest) -> float:
    """The share of its row's width that the column holding the class's answers (the keyed container lecture_class)
    has: the projector's column beside the focus figure."""
    def holds(node) -> bool:
        proto = getattr(node, "proto", None)
        if isinstance(proto, BlockProto) and proto.id.endswith("-lecture_class"):
            return True
        return any(holds(child) for child in getattr(node, "children", {}).values())

    todo = [at._tree]
    while todo:
        node = todo.pop()
        columns = [c for c in getattr(node, "children", {}).values() if type(c).__name__ == "Column"]
        for column in columns:
            if holds(column):
                return column.weight / sum(c.weight for c in columns)
        todo.extend(getattr(node, "children", {}).values())
    raise AssertionError("the class's answers are in no column")


def has_heatmap(at: AppTest, key: str) -> bool:
    """Whether the page drew a heatmap under this key."""
    try:
        drawn_heatmap(at, key)
    except (KeyError, IndexError):
        return False
    return True
