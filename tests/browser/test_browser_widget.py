"""attnviz.show's widget front end in a real Chromium: the widget's own _esm (the app's heatmap JS with the anywidget
host) rendered through anywidget's interface, render({model, el}), with a stand-in for the Jupyter model that hands
the `document` over as a DataView, as anywidget does (here one at an odd byte offset, the hardest case). A click
reaches the model as `selection` and the panel shows the cell's arithmetic with the run's own numbers."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import torch
from browser_helpers import cell_on_screen, chromium_page

import attnviz

pytestmark = pytest.mark.browser  # real headless Chromium: left out by -m "not browser"

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
HOOK = "window.attnvizHeatmaps['attnviz-heads']"
RENDER = """async ({ esm, b64, into }) => {
  const mod = await import(URL.createObjectURL(new Blob([esm], { type: "text/javascript" })));
  const bin = atob(b64), buffer = new ArrayBuffer(bin.length + 1), u8 = new Uint8Array(buffer, 1);
  for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
  const sent = [], handlers = {};
  window.__sent = sent;
  const model = {
    get: (name) => (name === "document" ? new DataView(buffer, 1, bin.length) : null),
    set: (name, value) => sent.push([name, value]), save_changes: () => sent.push(["saved"]),
    on: (event, f) => { handlers[event] = f; }, off: (event) => { delete handlers[event]; },
  };
  window.__cleanup = mod.default.render({ model, el: document.getElementById(into || "widget") });
}"""


@pytest.fixture(scope="module")
def widget(minilm):
    res = minilm.run("The cat sat on the mat because it was tired.", mask="causal", keep=True)
    return res, attnviz.show(res, layer=[3, 4], heads=[1, 2, 7])


def test_the_widget_renders_through_anywidgets_interface_and_a_click_reaches_python(widget):
    res, w = widget
    with chromium_page(1300, 900) as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_content(f"<style>{w._css}</style><div id='widget'></div>")
        page.evaluate(RENDER, {"esm": w._esm, "b64": base64.b64encode(w.document).decode()})
        page.wait_for_function(f"() => window.attnvizHeatmaps && {HOOK} && {HOOK}.draws >= 1", timeout=20_000,
                               polling=100)
        assert errors == []
        assert set(res.labels) <= set(page.evaluate(f"{HOOK}.labels()"))
        assert page.evaluate(f"{HOOK}.meta().titles")[0].startswith("head 1 ·")
        page.select_option("select[data-role=layer]", "1")  # the second layer kept: layer 4
        page.wait_for_function(f"() => {HOOK}.draws >= 2", polling=100)
        centre = cell_on_screen(page, "attnviz-heads", 2, 8, 6)  # head 7, query 8 "it", key 6 "mat"
        page.mouse.click(centre["x"], centre["y"])
        sent = page.evaluate("window.__sent")
        assert sent[-2] == ["selection", {"attention": "self-attention", "layer": 4, "head": 7, "query": 8, "key": 6}]
        assert sent[-1] == ["saved"]
        why = page.inner_text(".avv-why")
        assert "layer 4, head 7: query 8 “it” → key 6 “mat”" in why
        assert f"{float(res.attentions[4, 7, 8, 6]):.4f}" in why
        page.screenshot(path=str(ARTIFACTS / "widget_anywidget_host.png"), full_page=True)


CELL_OF = """({ into, p, r, c }) => {  // a cell's centre in one widget, from its own heatmap (not the page-wide hook)
  const s = document.querySelector(`#${into} .avhm`).__avhm, b = s.lay.boxes[p], rect = s.canvas.getBoundingClientRect();
  const k = rect.width / s.lay.width;
  return { x: rect.left + (b.x + (c + 0.5) * s.lay.cell) * k, y: rect.top + (b.y + (r + 0.5) * s.lay.cellH) * k };
}"""


def test_two_widgets_on_one_page_each_show_their_own_numbers(widget):
    """A notebook shows many widgets; a click on the first one reads its own cells, not the last one drawn."""
    res, w = widget
    raw = torch.softmax(torch.randn(1, 2, 4, 4, generator=torch.Generator().manual_seed(3)) * 3, dim=-1)
    first = attnviz.show(raw, tokens=["w", "x", "y", "z"])
    with chromium_page(1300, 900) as page:
        page.set_content(f"<!doctype html><style>{w._css}</style><div id='a'></div><div id='b'></div>")
        page.evaluate(RENDER, {"esm": first._esm, "b64": base64.b64encode(first.document).decode(), "into": "a"})
        page.evaluate(RENDER, {"esm": w._esm, "b64": base64.b64encode(w.document).decode(), "into": "b"})
        page.wait_for_function("() => document.querySelectorAll('.avhm-canvas').length === 2", polling=100)
        page.wait_for_timeout(300)
        page.evaluate("document.querySelector('#a').scrollIntoView()")
        at = page.evaluate(CELL_OF, {"into": "a", "p": 1, "r": 2, "c": 3})
        page.mouse.click(at["x"], at["y"])
        why = page.inner_text("#a .avv-why")
        assert "query 2 “y” → key 3 “z”" in why
        assert f"{float(raw[0, 1, 2, 3]):.4f}" in why and "cannot be recovered" in why


FOCUSED = """() => { const a = document.activeElement;
  return a && a.classList.contains('avhm-wrap') ? a.closest('.avhm').dataset.name : null; }"""


def test_the_widget_works_by_keyboard_and_reads_each_cell_with_its_layer_and_head(widget):
    """Tab reaches the widget's heads; PageDown and the arrows move the cursor to head 7, query 8 'it', key 6 'mat',
    read as the run's weight with its layer and head; Enter hands that cell to Python and shows its arithmetic,
    as a click does."""
    res, w = widget
    with chromium_page(1300, 900) as page:
        page.set_content(f"<style>{w._css}</style><div id='widget'></div>")
        page.evaluate(RENDER, {"esm": w._esm, "b64": base64.b64encode(w.document).decode()})
        page.wait_for_function(f"() => window.attnvizHeatmaps && {HOOK} && {HOOK}.draws >= 1", polling=100)
        for _ in range(10):  # past the pickers
            page.keyboard.press("Tab")
            if page.evaluate(FOCUSED) == "attnviz-heads":
                break
        assert page.evaluate(FOCUSED) == "attnviz-heads"
        assert page.evaluate(f"{HOOK}.reading().name").startswith("layer 3: 3 heads, weights after softmax")
        for key in ["PageDown", "PageDown"] + ["ArrowDown"] * 8 + ["ArrowRight"] * 6:
            page.keyboard.press(key)
        heard = page.evaluate(f"{HOOK}.reading().active")
        assert heard == f"query 8 'it', key 6 'mat': weight {float(res.attentions[3, 7, 8, 6]):.3f} (layer 3, head 7)"
        page.keyboard.press("Enter")
        sent = page.evaluate("window.__sent")
        assert sent[-2] == ["selection", {"attention": "self-attention", "layer": 3, "head": 7, "query": 8, "key": 6}]
        assert "layer 3, head 7: query 8 “it” → key 6 “mat”" in page.inner_text(".avv-why")
        assert page.locator(".avhm-table summary").first.inner_text() == "Table view: each query's 3 largest weights"
