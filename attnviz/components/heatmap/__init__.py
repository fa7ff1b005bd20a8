"""The heatmap component's front end: its JS parts joined into the one ES module a host takes, and its CSS.

Streamlit's components v2 takes one inline ES module string (no URL imports); a Jupyter widget (anywidget) and a
standalone HTML export can take the same. The JS lives here one idea per file, in the order they are joined:

    palette.js the colours it paints with, written from attnviz/draw/palette.py (their one home): no file here
    dom.js     find-or-create helpers; text only through textContent
    format.js  numbers as printed in a cell and in the hover
    scales.js  one colour scale per kind of matrix
    decode.js  the bytes payload (attnviz/draw/heatmap_payload.py and its wrappers) -> cells and meta
    layout.js  panel and cell positions; a mouse position -> a cell
    draw.js    panels painted on the canvas, values printed in big cells
    labels.js  titles, token labels, legend, hover
    export.js  "Download PNG"
    access.js  the heatmap as a grid for a keyboard and a screen reader: the cursor's moves, each cell's sentence,
               the heatmap's name and summary
    table.js   the table view: each query's largest keys as a table (a screen reader's, and a printed handout)
    mount.js   mountHeatmaps: the DOM, events, selection ring, keyboard cursor, the swap to a switch's other state

then one host's files (HOSTS), the only place that knows who called:

    streamlit.js  Streamlit's components v2: the default export is mountHeatmaps itself
    viewer.js     a notebook's widget and a standalone HTML file: the heads and model views, a layer picker, and the
                  arithmetic of a clicked cell, from one document (attnviz/notebook/document.py)
    anywidget.js  Jupyter (anywidget): export default { render({ model, el }) }
    page.js       a standalone HTML file (attnviz.save_html): the document is read from the page itself

Convention: each part is an ES module of its own (an editor, a linter and `node --check` read it alone). It imports
only from parts joined before it, each with one `import { a, b } from "./part.js";` statement, and marks what it
shares with `export` before a top-level declaration; only a host file has `export default`. Joining drops those
import statements and those `export` keywords, so every part shares one module scope: a top-level name is declared
once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from attnviz.draw.palette import heatmap_colours

HERE = Path(__file__).resolve().parent
PARTS = ("palette.js", "dom.js", "format.js", "scales.js", "decode.js", "layout.js", "draw.js", "labels.js", "export.js",
         "access.js", "table.js", "mount.js")
# parts written here rather than read from a file of the folder
GENERATED = {"palette.js": lambda: ("// the colours the heatmap paints with, from attnviz/draw/palette.py (their one home)\n"
                                    f"export const PALETTE = {json.dumps(heatmap_colours())};\n")}
HOSTS = {"streamlit": ("streamlit.js",), "anywidget": ("viewer.js", "anywidget.js"), "page": ("viewer.js", "page.js")}
HOST_CSS = {"streamlit": (), "anywidget": ("viewer.css",), "page": ("viewer.css",)}
IMPORT = re.compile(r'^import\s*\{[^}]*\}\s*from\s*"\./([\w-]+\.js)";[ \t]*\n', re.MULTILINE)
EXPORT = re.compile(r"^export (?!default\b)", re.MULTILINE)


def part_imports(source: str) -> list[str]:
    """The parts a part's source imports from, in its order (file names such as "decode.js")."""
    return IMPORT.findall(source)


def part_source(name: str) -> str:
    """A part's or host file's source: the file of the folder, or the part written here (GENERATED)."""
    return GENERATED[name]() if name in GENERATED else (HERE / name).read_text(encoding="utf-8")


def component_js(host: str = "streamlit") -> str:
    """The heatmap's JS for one host (HOSTS): the parts in PARTS order, then the host's files, joined into one ES
    module (Streamlit's and anywidget's default export is the host's)."""
    if host not in HOSTS:
        raise ValueError(f"host must be one of {', '.join(HOSTS)}, not {host!r}.")
    files = PARTS + HOSTS[host]
    joined = []
    for i, name in enumerate(files):
        source = part_source(name)
        for imported in part_imports(source):
            if imported not in files[:i]:
                raise ValueError(f"{name} imports {imported}, which is not a part joined before it ({', '.join(files[:i])}).")
        joined.append(f"// ---- {name}\n" + EXPORT.sub("", IMPORT.sub("", source)))
    return "\n".join(joined)


def component_css(host: str = "streamlit") -> str:
    """The heatmap's CSS (its rules are few and all about the same DOM), and the viewer's where the host has one."""
    if host not in HOSTS:
        raise ValueError(f"host must be one of {', '.join(HOSTS)}, not {host!r}.")
    return "\n".join((HERE / name).read_text(encoding="utf-8") for name in ("heatmap.css",) + HOST_CSS[host])
