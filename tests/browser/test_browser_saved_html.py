"""attnviz.save_html's file in a real Chromium with every network request refused: the heatmaps are drawn with the
tokens, a click shows the cell's arithmetic with the numbers of attnviz's own run, the model view and the layer
picker work, and a raw cross-attention (source ≠ target tokens) draws too."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from browser_helpers import cell_on_screen, chromium_page

import attnviz

pytestmark = pytest.mark.browser  # real headless Chromium: left out by -m "not browser"

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

SENTENCE = "The cat sat on the mat because it was tired."
HOOK = "window.attnvizHeatmaps && window.attnvizHeatmaps['{name}']"


def open_offline(page, path) -> list[str]:
    """Open the file with every request but the file itself aborted; -> the URLs that were asked for (and refused)."""
    asked: list[str] = []
    url = path.resolve().as_uri()

    def refuse(route):
        if route.request.url == url:
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    page.route("**/*", refuse)
    page.goto(url)
    return asked


def wait_drawn(page, name: str, draws: int = 1) -> None:
    page.wait_for_function(f"() => {HOOK.format(name=name)} && window.attnvizHeatmaps['{name}'].draws >= {draws}",
                           timeout=30_000, polling=100)


def non_blank_pixels(page, name: str) -> int:
    """How many pixels of the heatmap's canvas are neither white nor transparent."""
    return page.evaluate("""(name) => {
      const root = [...document.querySelectorAll('.avhm')].find((r) => r.dataset.name === name);
      const c = root.querySelector('canvas.avhm-canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) n++;
      return n;
    }""", name)


@pytest.fixture(scope="module")
def kept_run(minilm):
    return minilm.run(SENTENCE, mask="causal", keep=True)


def test_saved_file_draws_offline_and_a_click_shows_the_softmax_of_the_run(kept_run, tmp_path):
    path = attnviz.save_html(kept_run, tmp_path / "attention.html")
    with chromium_page(1400, 1000) as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        asked = open_offline(page, path)
        wait_drawn(page, "attnviz-heads")
        assert asked == [] and errors == []
        assert non_blank_pixels(page, "attnviz-heads") > 10_000
        labels = page.evaluate(f"{HOOK.format(name='attnviz-heads')}.labels()")
        assert set(kept_run.labels) <= set(labels)  # every token is a label (DOM text)
        assert "the" in page.inner_text("body") and "mat" in page.inner_text("body")
        values = page.evaluate(f"{HOOK.format(name='attnviz-heads')}.values(3)")  # head 3 of layer 0, as drawn
        torch.testing.assert_close(torch.tensor(values, dtype=torch.float32), kept_run.attentions[0, 3], atol=1e-4,
                                   rtol=0)
        page.screenshot(path=str(ARTIFACTS / "saved_html_heads.png"), full_page=True)
        with page.expect_download() as download:  # "Download PNG": a PNG of the heatmap, made in the page
            page.click(".avhm-png")
        png = download.value.path().read_bytes()
        assert download.value.suggested_filename.endswith(".png") and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000

        # a click on head 3, query 6 "mat", key 2 "cat" of layer 2: the arithmetic of that cell
        page.select_option("select[data-role=layer]", "2")
        wait_drawn(page, "attnviz-heads", 2)
        centre = cell_on_screen(page, "attnviz-heads", 3, 6, 2)
        page.mouse.click(centre["x"], centre["y"])
        why = page.inner_text(".avv-why")
        assert "layer 2, head 3: query 6 “mat” → key 2 “cat”" in why
        trace = kept_run.traces[2]
        raw = float(trace.scores[0, 3, 6, 2])
        assert f"{raw:.4f}".replace("-", "−") in why  # q·k, unscaled
        assert "1/√32" in why
        assert f"{float(kept_run.attentions[2, 3, 6, 2]):.4f}" in why  # the weight the model computed
        page.screenshot(path=str(ARTIFACTS / "saved_html_click.png"), full_page=True)

        # a masked cell (key after the query, causal): M = −∞ and weight 0
        centre = cell_on_screen(page, "attnviz-heads", 0, 1, 5)
        page.mouse.click(centre["x"], centre["y"])
        why = page.inner_text(".avv-why")
        assert "−∞ (masked)" in why and "0.0000" in why


def test_model_view_and_a_thumbnail_click_open_that_layer(kept_run, tmp_path):
    path = attnviz.save_html(kept_run, tmp_path / "model.html", view="model")
    with chromium_page(1400, 1000) as page:
        assert open_offline(page, path) == []
        wait_drawn(page, "attnviz-model")
        meta = page.evaluate(f"{HOOK.format(name='attnviz-model')}.meta()")
        assert meta["panels"] == 6 * 12 and meta["thumbnails"]
        assert non_blank_pixels(page, "attnviz-model") > 10_000
        page.screenshot(path=str(ARTIFACTS / "saved_html_model.png"), full_page=True)
        assert meta["legend"]["title"] == "weight after softmax"  # 13 tokens: no pooling, each cell one weight
        centre = cell_on_screen(page, "attnviz-model", 4 * 12 + 7, 3, 3)  # L4 H7
        page.mouse.click(centre["x"], centre["y"])
        wait_drawn(page, "attnviz-heads")
        assert page.input_value("select[data-role=layer]") == "4"


def test_raw_cross_attention_without_scores_says_what_it_can(tmp_path):
    gen = torch.Generator().manual_seed(0)
    att = torch.softmax(torch.randn(2, 4, 5, 7, generator=gen), dim=-1)  # (layers, heads, target 5, source 7)
    target, source = ["<s>", "le", "chat", "dort", "."], ["the", "cat", "is", "sleeping", "now", ".", "</s>"]
    path = attnviz.save_html(att, tmp_path / "cross.html", tokens=target, key_tokens=source)
    with chromium_page(1200, 900) as page:
        assert open_offline(page, path) == []
        wait_drawn(page, "attnviz-heads")
        labels = page.evaluate(f"{HOOK.format(name='attnviz-heads')}.labels()")
        assert set(target) <= set(labels) and set(source) <= set(labels)
        centre = cell_on_screen(page, "attnviz-heads", 1, 2, 3)
        page.mouse.click(centre["x"], centre["y"])
        why = page.inner_text(".avv-why")
        assert "query 2 “chat” → key 3 “sleeping”" in why
        assert f"{float(att[0, 1, 2, 3]):.4f}" in why
        assert "cannot be recovered" in why  # no logits: said, not invented
        assert math.isclose(float(att[0, 1, 2].sum()), 1.0, abs_tol=1e-5) and "1.0000" in why


FOCUSED = """() => { const a = document.activeElement;
  return a && a.classList.contains('avhm-wrap') ? a.closest('.avhm').dataset.name : null; }"""


def test_a_saved_file_works_by_keyboard_alone(kept_run, tmp_path):
    """No mouse: the layer picker by keyboard, Tab to the heads, the cursor to head 3, query 6 'mat', key 2 'cat'
    (read with its layer and head and the run's weight), Enter: that cell's arithmetic; the table view opens with
    Enter too."""
    path = attnviz.save_html(kept_run, tmp_path / "keys.html")
    with chromium_page(1400, 1000) as page:
        assert open_offline(page, path) == []
        wait_drawn(page, "attnviz-heads")
        page.focus("select[data-role=layer]")
        page.keyboard.press("ArrowDown")  # a select takes the arrow keys: layer 1
        page.keyboard.press("ArrowDown")  # layer 2
        wait_drawn(page, "attnviz-heads", 3)
        page.keyboard.press("Tab")
        assert page.evaluate(FOCUSED) == "attnviz-heads"
        for key in ["PageDown"] * 3 + ["ArrowDown"] * 6 + ["ArrowRight"] * 2:
            page.keyboard.press(key)
        weight = float(kept_run.attentions[2, 3, 6, 2])
        heard = page.evaluate(f"{HOOK.format(name='attnviz-heads')}.reading().active")
        assert heard == f"query 6 'mat', key 2 'cat': weight {weight:.3f} (layer 2, head 3)"
        page.keyboard.press("Enter")
        why = page.inner_text(".avv-why")
        assert "layer 2, head 3: query 6 “mat” → key 2 “cat”" in why and f"{weight:.4f}" in why
        page.keyboard.press("Tab")  # Download PNG
        page.keyboard.press("Tab")  # the table view
        page.keyboard.press("Enter")
        first = page.locator(".avhm-table table").first
        first.wait_for()
        assert first.locator("caption").inner_text().endswith("(layer 2, head 0)")
        page.screenshot(path=str(ARTIFACTS / "saved_html_keyboard.png"), full_page=True)


def test_a_thumbnail_opened_by_enter_hands_the_keyboard_to_that_heads_cell(kept_run, tmp_path):
    """In the model view, Enter on a thumbnail's cell opens that layer's heads, as a click does, and the focus goes on
    to the same cell of that head there (the thumbnails are hidden: left on them, the focus would fall to the page)."""
    path = attnviz.save_html(kept_run, tmp_path / "model_keys.html", view="model")
    with chromium_page(1400, 1000) as page:
        assert open_offline(page, path) == []
        wait_drawn(page, "attnviz-model")
        page.focus("select[data-role=view]")
        page.keyboard.press("Tab")
        assert page.evaluate(FOCUSED) == "attnviz-model"
        for key in ["PageDown"] * (12 + 7) + ["ArrowDown"] * 8 + ["ArrowRight"] * 6:  # layer 1, head 7: 'it' -> 'mat'
            page.keyboard.press(key)
        assert page.evaluate(f"{HOOK.format(name='attnviz-model')}.reading().active").endswith("(layer 1, head 7)")
        page.keyboard.press("Enter")
        wait_drawn(page, "attnviz-heads")
        assert page.input_value("select[data-role=layer]") == "1" and page.evaluate(FOCUSED) == "attnviz-heads"
        weight = float(kept_run.attentions[1, 7, 8, 6])
        assert page.evaluate(f"{HOOK.format(name='attnviz-heads')}.reading().active") == \
            f"query 8 'it', key 6 'mat': weight {weight:.3f} (layer 1, head 7)"
