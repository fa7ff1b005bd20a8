"""Presentation mode on a projector (1024×768, ?present=1), every page: a control changed in the page leaves the
sidebar closed and present=1 in the address bar, and the heatmaps' labels are at least 20 px. Screenshots in
test-artifacts/present_<page>.png."""

import pytest
from apptest_helpers import lesson_menu
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
SIDEBAR_OPEN = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  return !!s && s.getAttribute('data-collapsed') !== 'true' && s.getBoundingClientRect().width > 50; }"""
# the smallest type of any token label or title drawn by a heatmap component (inside their shadow roots)
SMALLEST_LABEL_PX = """() => Math.min(...[...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
  .filter(h => h.shadowRoot).flatMap(h => [...h.shadowRoot.querySelectorAll('.avhm-lab, .avhm-title')])
  .map(e => parseFloat(getComputedStyle(e).fontSize)))"""

# pages whose figures ignore the shared settings leave the sentence/model/mask row off
# (ui.open_page(settings=())): their own control to change, and what the link then says
# pages whose figures ignore the shared scaling (ui.open_page's settings=): no switch in their row
NO_SCALING = ("scaling_lab", "additive_attention", "kv_cache", "induction_heads", "head_claims")
OWN_CONTROL = {"attention_layer": ("b · many queries", "al_step=b"), "why_attention": ("short", "wa_text=forty"),
               "decoder_block": ("Head", "dec_head=2")}
OWN_PICKER = {"decoder_block": ("dec_head", "2")}  # a control named above that is a selectbox: its key, the option picked


def heatmap_count(page) -> int:
    return page.evaluate("() => Object.keys(window.attnvizHeatmaps || {}).length")


NO_CONTROLS = ("transformer_map",)  # one figure of links, nothing to change (tests/browser/test_browser_lecture_walk.py)
WITH_CONTROLS = [path for _, path, _ in lesson_menu() if path not in NO_CONTROLS]


@pytest.mark.parametrize("path", WITH_CONTROLS, ids=[p or "explorer" for p in WITH_CONTROLS])
def test_a_control_changed_in_presentation_mode_keeps_the_sidebar_closed_and_the_link(server, path):
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/{path}?present=1&model=toy")
        if path in OWN_CONTROL:  # no model row on this page: one of its own controls is changed instead
            label, in_link = OWN_CONTROL[path]
            page.get_by_text(label, exact=True).wait_for(timeout=120_000)
            wait_for_app_idle(page, timeout_ms=120_000)
            assert not page.evaluate(SIDEBAR_OPEN), path
            assert page.locator(".st-key-presenter_controls").count() == 0, path
            if path in OWN_PICKER:
                key, option = OWN_PICKER[path]
                picker = page.locator(f".st-key-{key}").get_by_role("combobox")
                picker.click()
                picker.press("ArrowDown")  # opens its list (a click alone only focuses it in headless Chromium)
                page.get_by_role("option", name=option, exact=True).click()
            else:
                page.get_by_text(label, exact=True).click()
            page.wait_for_function("(s) => location.search.includes(s)", arg=in_link, timeout=30_000, polling=100)
        else:
            page.wait_for_selector(".st-key-presenter_controls", timeout=120_000)
            wait_for_app_idle(page, timeout_ms=120_000)
            assert not page.evaluate(SIDEBAR_OPEN), path
            switch = page.locator(".st-key-presenter_controls").get_by_text("Scale scores by 1/√d_k")
            if path in NO_SCALING:  # the page ignores the shared scaling: its row leaves the switch off
                assert switch.count() == 0, path
            else:
                was = page.locator(".st-key-scaled input").is_checked()  # the sidebar's (Compare's B has its own)
                switch.click()
                page.wait_for_function("(was) => { const s = document.querySelector('.st-key-scaled input');"
                                       " return s && s.checked !== was; }", arg=was, timeout=30_000, polling=100)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert not page.evaluate(SIDEBAR_OPEN), f"{path}: the sidebar opened after a click"
        assert "present=1" in page.url, page.url
        if heatmap_count(page):
            assert page.evaluate(SMALLEST_LABEL_PX) >= 20, path
        assert not exceptions_on(page), path
        page.screenshot(path=str(ARTIFACTS / f"present_{path or 'explorer'}.png"))


def test_a_page_switch_in_presentation_mode_keeps_it(server):
    """The explorer's "Follow this pair step by step", in presentation mode: the mode, the closed sidebar, the
    model and present=1 come along, and the pair is the first thing on the page."""
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/?present=1&model=toy&sbs_head=1&sbs_query=2&sbs_key=1")
        follow = page.get_by_text("Follow this pair step by step")
        follow.wait_for(timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        follow.click()
        page.get_by_role("heading", name="One query, one key").wait_for(timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert "/step_by_step" in page.url and "present=1" in page.url, page.url
        assert not page.evaluate(SIDEBAR_OPEN)
        assert page.locator(".st-key-presenter_controls").count() == 1
        assert "toy · layer 0, head 1 of 2" in page.inner_text('[data-testid="stMain"]')
        # the pair comes before the matrices: its heading is on the first screen, the matrices' below it
        pair = page.get_by_role("heading", name="One query, one key").bounding_box()
        matrices = page.get_by_role("heading", name="From X to the output").bounding_box()
        assert pair["y"] < 768 and pair["y"] < matrices["y"]
        page.screenshot(path=str(ARTIFACTS / "present_follow_the_pair.png"))
        assert not exceptions_on(page)
