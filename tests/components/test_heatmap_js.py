"""The heatmap component's JS parts join into one ES module per host that parses: Streamlit's and anywidget's with
one default export (their host file's), the standalone page's with none; the drawing parts are the same in all."""

import json
import re
import shutil
import subprocess

import pytest

import attnviz.components.heatmap as heatmap_js
from attnviz.components.heatmap import (
    GENERATED,
    HERE,
    HOSTS,
    PARTS,
    component_css,
    component_js,
    part_imports,
    part_source,
)


def test_every_js_file_of_the_folder_is_a_joined_part_or_a_host_file():
    host_files = {name for files in HOSTS.values() for name in files}
    assert sorted(p.name for p in HERE.glob("*.js")) == sorted(set(PARTS) - set(GENERATED) | host_files)
    assert PARTS[-1] == "mount.js" and PARTS[0] == "palette.js" and not (HERE / "palette.js").exists()


@pytest.mark.parametrize("host, default_export", [("streamlit", ["export default mountHeatmaps;"]),
                                                  ("anywidget", ["export default {"]), ("page", [])])
def test_each_hosts_module_has_no_imports_the_same_drawing_parts_and_its_own_default_export(host, default_export):
    js = component_js(host)
    assert not re.search(r"^import\b", js, re.MULTILINE)
    assert re.findall(r"^export\b.*", js, re.MULTILINE) == default_export
    files = PARTS + HOSTS[host]
    for name in files:  # every part is in, in order
        assert f"// ---- {name}\n" in js
    assert [js.index(f"// ---- {n}\n") for n in files] == sorted(js.index(f"// ---- {n}\n") for n in files)
    shared = component_js("streamlit").split("// ---- streamlit.js")[0]
    assert js.startswith(shared)  # one source: the drawing code is byte for byte the app's
    assert ".avhm-canvas" in component_css(host)


def test_an_unknown_host_is_refused():
    with pytest.raises(ValueError, match="host must be one of"):
        component_js("vscode")


def test_a_part_that_imports_a_later_part_is_refused(monkeypatch):
    assert "decode.js" in part_imports((HERE / "draw.js").read_text(encoding="utf-8"))
    monkeypatch.setattr(heatmap_js, "PARTS", ("palette.js", "dom.js", "format.js", "scales.js", "draw.js", "decode.js"))
    with pytest.raises(ValueError, match="draw.js imports decode.js"):
        component_js()


@pytest.fixture(scope="module")
def node():
    """node runs these checks; tests/install_browser.sh installs it (Debian's nodejs). Missing, they fail: they do
    not skip without a word."""
    assert shutil.which("node"), "node is missing: run bash tests/install_browser.sh (it installs Debian's nodejs)"


def layout_in_node(tmp_path, name: str, script: str):
    """What `script` prints as JSON, run in node with layout.js's export `name` imported (and no DOM but a canvas
    stub, which layout.js asks for at import)."""
    (tmp_path / "layout.mjs").write_text((HERE / "layout.js").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "run.mjs").write_text(
        "globalThis.document = { createElement: () => ({ getContext: () => ({}) }) };\n"
        f"const {{ {name} }} = await import('./layout.mjs');\n{script}\n", encoding="utf-8")
    run = subprocess.run(["node", str(tmp_path / "run.mjs")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_node_parses_the_joined_module_and_each_part_alone(node, tmp_path):
    """A top-level name declared in two parts (one scope once joined) fails here, not in a browser."""
    every_file = PARTS + tuple(sorted({name for files in HOSTS.values() for name in files}))
    for name, source in [(f"joined-{h}", component_js(h)) for h in HOSTS] + [(p, part_source(p)) for p in every_file]:
        path = tmp_path / f"{name}.mjs"
        path.write_text(source, encoding="utf-8")
        run = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
        assert run.returncode == 0, f"{name}: {run.stderr}"


def test_up_to_16_tokens_every_label_shows_and_longer_texts_are_thinned(node, tmp_path):
    """The explorer's thumbnails at 16 tokens labelled every other row ("it" and "tired" could not be told apart):
    up to 16 tokens no label is skipped (a smaller font where cells are small); beyond, labels are thinned. On a
    projector (presentation mode's 20 px type) a label is never smaller than 20 px: thinned instead, and 24 tokens in
    22 px cells (one heatmap across a 1024 px projector) keep every label."""
    plans = layout_in_node(tmp_path, "labelPlan",
                           "console.log(JSON.stringify([[16, 9.5], [16, 6], [13, 20], [17, 9.5], [40, 4], [16, 21, 20],"
                           " [16, 12, 20], [24, 22, 20]].map(([n, c, f]) => labelPlan(n, c, f ?? 11))));")
    assert [p["step"] for p in plans] == [1, 1, 1, 2, 4, 1, 2, 1]
    assert [p["fontPx"] for p in plans] == [9, 7, 11, 11, 11, 20, 20, 20]  # presenting (20 px type): ≥ 20 px


def test_numbers_in_cells_are_at_least_20_px_on_a_projector_or_not_printed(node, tmp_path):
    """Numbers printed in cells were 13 px on a projector at most (min(13, cell / 3)): the back row cannot read
    them. With presentation mode's type they are 20 px where the widest number fits its cell, else none (the foot
    says to hover); at the default type they stay as they were."""
    sizes = layout_in_node(tmp_path, "valuePlan",
                           "const width = (px) => 2.2 * px;  // '0.68' is about 2.2 em wide\n"
                           "console.log(JSON.stringify([[56, 56, 20], [40, 40, 20], [56, 22, 20], [56, 56, 11],"
                           " [39, 39, 11], [20, 20, 11]].map(([w, h, f]) => valuePlan(w, h, f, width))));")
    assert sizes == [20, 0, 0, 13, 13, 0]
