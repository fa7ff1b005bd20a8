"""Head claims in a real headless Chromium at 1024×768 ?present=1 and on a phone (390×844): the map, the weight
and contribution rows hold attnviz's numbers, nothing scrolls sideways, no exception. Screenshots in
test-artifacts/head_claims_*.png."""

import os
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import ROOT, chromium_page, exceptions_on, wait_for_drawn, wait_for_text

from attnviz.analysis.claims import head_table, item_scores, run_corpus
from attnviz.analysis.corpus import load_corpus

ARTIFACTS = ROOT / "test-artifacts"
TEXT = "The animal didn't cross the street because it was too tired."
SIZES = [(1024, 768, "&present=1"), (390, 844, "")]
pytestmark = pytest.mark.browser
MAIN = '[data-testid="stMain"]'
HEATMAPS = ["hc_map", "hc_alpha", "hc_norm"]


def drawn_values(page, key: str) -> np.ndarray:
    return np.array(page.evaluate(f"() => window.attnvizHeatmaps['{key}'].values(0)"), dtype=np.float64)


@pytest.fixture(scope="module")
def hit_map(minilm):
    return head_table(item_scores(run_corpus(minilm, load_corpus()), "coreference"))[0].numpy()


@pytest.mark.timeout(1200)  # the first run scores 300 sentences: minutes on a busy 2-core machine
@pytest.mark.parametrize("width,height,present", SIZES, ids=["1024x768-present", "390x844"])
def test_head_claims_draws_attnvizs_numbers(server, minilm, hit_map, width, height, present):
    with chromium_page(width=width, height=height) as page:
        page.goto(f"{server}/head_claims?text={quote(TEXT)}&hc_relation=coreference&hc_layer=5&hc_head=11"
                  f"&hc_ablate=L5+H11{present}", timeout=120_000)
        wait_for_drawn(page, HEATMAPS, timeout_ms=400_000, idle_timeout_ms=400_000)
        text = wait_for_text(page, "Where it fails", "Knocking out L5 H11", "weight is not importance",
                             timeout_ms=400_000)
        assert "Layer 5, head 11 gives its largest weight to the labelled key in 37% of 300" in text
        np.testing.assert_allclose(drawn_values(page, "hc_map"), hit_map, atol=1e-4)
        res = minilm.run(TEXT)
        np.testing.assert_allclose(drawn_values(page, "hc_alpha")[0], res.attentions[5, 11, 10].numpy(), atol=1e-4)
        # every title reads whole, or loses whole " · " parts (with "…") where its panel is narrow: never cut mid-word
        # by CSS ("share of queries whose top ke…" at 1024 px), nor inside its formula ("layer 5, head 11: ‖α …")
        titles = {key: page.evaluate(f"() => window.attnvizHeatmaps['{key}'].titles()") for key in HEATMAPS}
        for key, shown in titles.items():
            for t in shown:
                assert not t["cut"] and t["shown"].count("‖") % 2 == 0, (key, t)
                assert t["shown"] == t["full"] or t["full"].startswith(t["shown"].removesuffix(" …") + " · "), t
        assert titles["hc_map"][0]["shown"] == "top key is labelled (share)"
        assert titles["hc_norm"][0]["shown"].startswith("layer 5, head 11: the size of what each key adds")
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        page.wait_for_timeout(800)
        page.screenshot(path=str(ARTIFACTS / f"head_claims_{width}x{height}.png"))
        scroll = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll[0] <= scroll[1], scroll
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / f"head_claims_{width}x{height}_chart.png"))
        for section in ("2 · Knock heads out", "3 · Weight against contribution"):
            page.get_by_text(section).scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / f"head_claims_{width}x{height}_{section[0]}.png"))
        assert not exceptions_on(page)
