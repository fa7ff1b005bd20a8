"""The quick change on every page with token pickers, in a real headless Chromium at 1024×768 ?present=1: a new
sentence typed and, at once, the 1/√d_k switch clicked (the click's blur commits the text, so two reruns leave the
browser together, and the second can carry the picker's value and the address of the OLD sentence). The pickers
must end on the same token in the new sentence, and the address must name it (ui/token_link.py).
Find the head's case is in test_browser_truthful_controls.py; the explorer's selected cell in
test_browser_quick_changes.py. Screenshots in test-artifacts/quick_pickers_*.png."""

import os
from urllib.parse import quote, unquote_plus

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_app_idle

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.browser
ANIMAL = "The animal didn't cross the street because it was too tired."
TROPHY = "The trophy didn't fit in the suitcase because it was too big."
# MiniLM's tokens: [CLS] the animal didn ' t cross the street because it was too tired . [SEP]
#                  [CLS] the trophy didn ' t fit in the suitcase because it was too big . [SEP]

PAGES = {  # page -> (the link's picker values in ANIMAL, {picker key: the option it must show in TROPHY})
    "step_by_step": ({"sbs_query": "10: it", "sbs_key": "9: because"}, {"sbs_query": "11: it", "sbs_key": "10: because"}),
    "encoder_layer": ({"enc_token": "10: it"}, {"enc_token": "11: it"}),
    "qk_space": ({"layer": "3", "qk_head": "1", "qk_row": "10"}, {"qk_row": "it (11)"}),
}
# what the address says for each picker once followed
IN_LINK = {"sbs_query": "11: it", "sbs_key": "10: because", "enc_token": "11: it", "qk_row": "11"}


def shown(page, key: str) -> str:
    return page.locator(f".st-key-{key} input[role='combobox']").input_value().strip()


@pytest.mark.parametrize("path", list(PAGES))
@pytest.mark.parametrize("attempt", range(2))  # the race is a matter of timing: each page is tried twice
def test_a_quick_change_keeps_each_pickers_token(server, path, attempt):
    link, want = PAGES[path]
    params = "&".join(f"{k}={quote(v)}" for k, v in link.items())
    with chromium_page(width=1024, height=768) as page:
        page.goto(f"{server}/{path}?text={quote(ANIMAL)}&{params}&present=1")
        page.locator(f".st-key-{next(iter(want))} input[role='combobox']").wait_for(timeout=120_000)
        wait_for_app_idle(page)
        box = page.locator(".st-key-presenter_controls textarea")
        box.fill(TROPHY)
        page.locator(".st-key-presenter_controls").get_by_text("Scale scores by 1/√d_k").click()
        page.wait_for_function(
            "(want) => Object.entries(want).every(([k, v]) => document.querySelector("
            "`.st-key-${k} input[role='combobox']`)?.value.trim() === v)", arg=want, timeout=120_000, polling=100)
        wait_for_app_idle(page)
        page.wait_for_timeout(1500)  # a late rerun that undid the follow would have come back by now
        wait_for_app_idle(page)
        assert {key: shown(page, key) for key in want} == want
        address = unquote_plus(page.url)
        for key in want:
            assert f"{key}={IN_LINK[key]}" in address, address
        assert not page.get_by_role("switch", name="Scale scores by 1/√d_k").is_checked()
        assert not exceptions_on(page)
        page.screenshot(path=str(ARTIFACTS / f"quick_pickers_{path}.png"))
