"""The heatmap as a grid for a keyboard and a screen reader (attnviz/components/heatmap/access.js, table.js), run in
node on real payloads (attnviz.draw.heatmap_payload): where each key moves the cursor, the sentence each cell is read
as (the drawn number, named as what it is, with its layer and head), the heatmap's one-line summary, the table view's
rows. The real-browser walks are tests/browser/test_browser_heatmap_keyboard.py."""

import base64
import json
import shutil
import subprocess

import numpy as np
import pytest

from attnviz.components.heatmap import PARTS, part_source
from attnviz.draw.heatmap_payload import heatmap_payload

TOKENS = ["the", "cat", "sat", "it"]


@pytest.fixture(scope="module")
def node():
    assert shutil.which("node"), "node is missing: run bash tests/install_browser.sh (it installs Debian's nodejs)"


def in_node(tmp_path, payloads: dict[str, bytes], script: str):
    """What `script` prints as JSON, run in node with every part of the component importable as an ES module (a
    canvas stub for layout.js, no other DOM) and each payload decoded (decode.js) into `models[name]`."""
    for name in PARTS:
        (tmp_path / name).write_text(part_source(name), encoding="utf-8")
    (tmp_path / "package.json").write_text('{"type": "module"}', encoding="utf-8")
    data = json.dumps({name: base64.b64encode(p).decode() for name, p in payloads.items()})
    (tmp_path / "run.js").write_text(
        "globalThis.document = { createElement: () => ({ getContext: () => ({}) }) };\n"
        "const A = await import('./access.js'), T = await import('./table.js'), D = await import('./decode.js');\n"
        f"const models = Object.fromEntries(Object.entries({data}).map(([k, b]) => "
        "[k, D.decode(new Uint8Array(Buffer.from(b, 'base64')))]));\n" + script, encoding="utf-8")
    run = subprocess.run(["node", str(tmp_path / "run.js")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def softmax_rows(seed: int, panels: int, n: int = 4) -> np.ndarray:
    z = np.random.default_rng(seed).normal(size=(panels, n, n)) * 2
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)  # (panels, n, n)


def test_keys_move_the_cursor_within_a_panel_and_jump_across_panels(node, tmp_path):
    grid = {"panels": 3, "rows": 4, "cols": 5}
    one = {"panels": 1, "rows": 20, "cols": 5}
    moves = in_node(tmp_path, {}, f"""const at = {{ panel: 1, row: 2, col: 3 }}, g = {json.dumps(grid)}, o = {json.dumps(one)};
      const keys = [["ArrowLeft"], ["ArrowRight"], ["ArrowUp"], ["ArrowDown"], ["Home"], ["End"], ["Home", true],
                    ["End", true], ["PageUp"], ["PageDown"], ["Tab"], ["a"]];
      const corner = {{ panel: 2, row: 3, col: 4 }}, origin = {{ panel: 0, row: 0, col: 0 }};
      const cell = (row) => ({{ panel: 0, row, col: 1 }});
      console.log(JSON.stringify({{ grid: keys.map(([k, c]) => A.moved(at, k, !!c, g)),
        edge: [A.moved(corner, "ArrowRight", false, g), A.moved(corner, "PageDown", false, g),
               A.moved(origin, "ArrowUp", false, g)],
        one: [A.moved(cell(10), "PageUp", false, o), A.moved(cell(3), "PageUp", false, o),
              A.moved(cell(15), "PageDown", false, o)] }}));""")
    cell = lambda p, r, c: {"panel": p, "row": r, "col": c}
    assert moves["grid"] == [cell(1, 2, 2), cell(1, 2, 4), cell(1, 1, 3), cell(1, 3, 3),  # arrows: one cell
                             cell(1, 2, 0), cell(1, 2, 4),  # Home / End: the row's first / last key
                             cell(1, 0, 3), cell(1, 3, 3),  # Ctrl+Home / Ctrl+End: the column's first / last query
                             cell(0, 2, 3), cell(2, 2, 3),  # PageUp / PageDown: the same cell, previous / next head
                             None, None]  # Tab and letters go to the page: no trap
    assert moves["edge"] == [cell(2, 3, 4), cell(2, 3, 4), cell(0, 0, 0)]  # edges hold
    assert moves["one"] == [cell(0, 2, 1), cell(0, 0, 1), cell(0, 19, 1)]  # one panel: eight rows a page


def test_each_cell_is_read_with_its_tokens_its_drawn_weight_and_its_layer_and_head(node, tmp_path):
    w = softmax_rows(0, panels=2)
    grid = heatmap_payload(w, TOKENS, titles=["head 1 · H 1.2", "head 4 · H 0.3"], columns=2, selectable=True,
                           panel_names=["layer 3, head 1", "layer 3, head 4"], label="layer 3: 2 heads")
    single = heatmap_payload(w[1], TOKENS, titles=["layer 2, head 5: weights after softmax"])
    plain = heatmap_payload(w[0], TOKENS, titles=["a matrix"])
    said = in_node(tmp_path, {"grid": grid, "single": single, "plain": plain},
                   """console.log(JSON.stringify({
                      grid: [A.cellSentence(models.grid, 0, 3, 1), A.cellSentence(models.grid, 1, 0, 2)],
                      single: A.cellSentence(models.single, 0, 2, 2), plain: A.cellSentence(models.plain, 0, 1, 0),
                      name: A.gridLabel(models.grid.meta), summary: A.summary(models.grid),
                      keys: A.keysHelp(models.grid.meta) }));""")
    assert said["grid"] == [f"query 3 'it', key 1 'cat': weight {w[0, 3, 1]:.3f} (layer 3, head 1)",
                            f"query 0 'the', key 2 'sat': weight {w[1, 0, 2]:.3f} (layer 3, head 4)"]
    assert said["single"] == f"query 2 'sat', key 2 'sat': weight {w[1, 2, 2]:.3f} (layer 2, head 5)"  # from its title
    assert said["plain"] == f"query 1 'cat', key 0 'the': weight {w[0, 1, 0]:.3f}"  # no layer or head it could know
    assert said["name"] == "layer 3: 2 heads: 2 panels of 4 × 4 weights"
    top = sorted(((w[p, r, c], p, r, c) for p in range(2) for r in range(4) for c in range(4)), reverse=True)[:3]
    assert said["summary"] == "The 3 largest weights: " + "; ".join(
        f"{v:.3f} at query {r} '{TOKENS[r]}', key {c} '{TOKENS[c]}' (layer 3, head {(1, 4)[p]})" for v, p, r, c in top) + "."
    assert "Page Up, Page Down: the same cell in the previous or next panel" in said["keys"]
    assert said["keys"].endswith("Enter shows the cell's arithmetic.")


def test_masked_cells_are_read_as_minus_infinity_and_signed_values_as_values(node, tmp_path):
    m = np.tril(np.ones((4, 4), dtype=bool))  # causal: True = may attend
    scores = np.where(m, np.arange(16.0).reshape(4, 4) - 7.25, -np.inf)
    mask = heatmap_payload(m, TOKENS, titles=["causal mask"], kind="mask")
    signed = heatmap_payload(scores, TOKENS, TOKENS, titles=["layer 0, head 2: scores S″"], kind="signed",
                             value_name=("S″ = S·s + M", "score"))
    said = in_node(tmp_path, {"mask": mask, "signed": signed}, """console.log(JSON.stringify({
        mask: [A.cellSentence(models.mask, 0, 0, 3), A.cellSentence(models.mask, 0, 3, 0)], summary: A.summary(models.mask),
        signed: [A.cellSentence(models.signed, 0, 0, 1), A.cellSentence(models.signed, 0, 1, 0)],
        signedSummary: A.summary(models.signed),
        table: [0, 3].map((r) => T.topOfRow(models.signed, 0, r)) }));""")
    assert said["mask"] == ["query 0 'the', key 3 'it': M −∞ (masked)", "query 3 'it', key 0 'the': M 0 (may attend)"]
    assert said["summary"] == "6 of 16 cells masked (−∞), the others 0 (may attend)."
    assert said["signed"] == ["row 0 'the', key (attended to) 1 'cat': score −∞ (masked) (layer 0, head 2)",
                              "row 1 'cat', key (attended to) 0 'the': score −3.250 (layer 0, head 2)"]
    # signed: largest in size, whatever the sign (−7.25 at (0, 0) comes second, before 6.75)
    assert said["signedSummary"].startswith("The 3 largest scores in size: 7.750 at row 3 'it', key (attended to) 3 'it' "
                                            "(layer 0, head 2); −7.250 at row 0 'the', key (attended to) 0 'the' (layer 0, "
                                            "head 2); 6.750 at row 3")
    assert said["signedSummary"].endswith("6 of 16 cells −∞ (masked).")
    assert said["table"] == [[{"c": 0, "v": -7.25}], [{"c": 3, "v": 7.75}, {"c": 2, "v": 6.75}, {"c": 1, "v": 5.75}]]
