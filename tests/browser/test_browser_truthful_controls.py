"""The presenter's row and the token pickers in a real headless Chromium at 1024×768 ?present=1:

- on a fresh load (every lecture step is one), the mask button names the mask the page uses from its very first
  frame (every text the button ever shows is recorded from the page's start), on an encoder (MiniLM) and on a
  decoder with a built-in causal mask (tiny-llama), and neither its label nor the model picker's name is cut off;
- on Find the head, a new sentence typed slowly, or typed and followed at once by another click, leaves pickers
  that name the tokens the ranking uses.
Screenshots in test-artifacts/controls_*.png."""

import os
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import browser_helpers
import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle, wait_for_drawn, wait_for_text

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
ANIMAL = "The animal didn't cross the street because it was too tired."
TROPHY = "The trophy didn't fit in the suitcase because it was too big."
BUTTON = ".st-key-presenter_controls [data-testid='stPopover'] button"

# every text the mask button shows, from the first frame on: a MutationObserver installed before the page loads
RECORD_BUTTON = """(() => {
  window.__maskLabels = [];
  const look = () => {
    const b = document.querySelector(".st-key-presenter_controls [data-testid='stPopover'] button p");
    const t = b && b.innerText.trim();  // the label's paragraph (the button also holds an arrow icon's name)
    if (t && window.__maskLabels[window.__maskLabels.length - 1] !== t) window.__maskLabels.push(t);
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true, characterData: true});
})();"""


# is the label cut: any box from the label's paragraph up to the button narrower than what it holds, or the paragraph
# reaching past the button's right edge
CUT = """(sel) => { const b = document.querySelector(sel), p = b.querySelector('p');
  for (let e = p; e && e !== b.parentElement; e = e.parentElement) if (e.scrollWidth > e.clientWidth + 1) return true;
  return p.getBoundingClientRect().right > b.getBoundingClientRect().right; }"""


@pytest.fixture(scope="module")
def recording_tab():
    """One tab for the first-frame tests, with the recorder installed: an init script stays with its tab for good, so
    each test had a tab of its own, and each new tab started a cold renderer. Every load runs the script afresh."""
    context = browser_helpers.worker_chromium.get().new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.add_init_script(RECORD_BUTTON)
    try:
        yield page
    finally:
        context.close()


@pytest.mark.parametrize(("model", "mask", "shown"), [
    ("all-MiniLM-L6-v2", "causal", "Mask: causal"),
    ("all-MiniLM-L6-v2", "window", "Mask: window 2"),
    ("tiny-llama", "none", "Mask: built-in causal"),
    ("tiny-llama", "causal", "Mask: built-in causal"),
    ("tiny-llama", "global", "Mask: built-in causal + global + local 1"),
], ids=["minilm-causal", "minilm-window", "tiny-llama-none", "tiny-llama-causal", "tiny-llama-global"])
def test_a_fresh_load_names_the_pages_mask_from_the_first_frame(server, recording_tab, model, mask, shown):
    page = recording_tab
    page.goto(f"{server}/?model={model}&layer=1&mask={mask}&scaled=false&present=1")
    wait_for_drawn(page, ["grid"])
    wait_for_app_idle(page)
    seen = page.evaluate("() => window.__maskLabels")
    assert seen == [shown], seen  # never another label, not even for a frame
    assert page.locator(BUTTON + " p").inner_text().strip() == shown
    cut = page.evaluate(CUT, BUTTON)
    assert not cut, "the button's label is cut off"
    picked = page.locator(".st-key-presenter_controls .st-key-model input[role='combobox']")
    assert picked.input_value() == model
    assert picked.evaluate("e => e.scrollWidth <= e.clientWidth"), "the model's name is cut off"
    assert not page.get_by_role("switch", name="Scale scores by 1/√d_k").is_checked()  # scaled=false
    said = page.locator('[data-testid="stMain"]').inner_text()
    if model == "tiny-llama":  # the page's own sentence about the mask says the same
        assert "built-in causal mask" in said
    assert not exceptions_on(page)
    page.screenshot(path=str(ARTIFACTS / f"controls_mask_{model}_{mask}.png"))


def pickers(page) -> tuple[str, str]:
    read = lambda key: page.locator(f".st-key-{key} input[role='combobox']").input_value().strip()
    return read("fh_query"), read("fh_key")


@pytest.mark.parametrize("quick", [False, True], ids=["slow change", "quick change"])
def test_find_the_heads_pickers_name_the_tokens_the_ranking_uses_after_a_new_sentence(server, quick):
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/find_head?text={quote(ANIMAL)}&present=1")
        wait_for_drawn(page, ["fh_map", "fh_head_1"])
        assert pickers(page) == ("it (10)", "animal (2)")
        box = page.locator(".st-key-presenter_controls textarea")
        box.fill(TROPHY)
        if quick:  # the box is committed by the click's blur, and the click changes another control at once
            page.locator(".st-key-presenter_controls").get_by_text("Scale scores by 1/√d_k").click()
        else:
            box.press("Control+Enter")
        said = wait_for_text(page, "query it (11)", "key trophy (2)")
        wait_for_app_idle(page)
        assert pickers(page) == ("it (11)", "trophy (2)")
        assert "The key token “animal” (2) is not in the new text" in said
        assert "fh_query=11" in page.url and "fh_key=2" in page.url
        assert not exceptions_on(page)
        page.screenshot(path=str(ARTIFACTS / f"controls_find_head_{'quick' if quick else 'slow'}.png"))
