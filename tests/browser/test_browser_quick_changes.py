"""Two quick changes in a row, in a real Chromium: the screen must end on what every control says.

Type a new sentence and click the 1/√d_k switch without waiting (the natural order in class). The switch's
callback asks for only the heatmap parts to rerun; the sentence arrives in the same rerun. Before the view
state (ui/state.py) the parts were rerun with the settings of the last full run and kept the old sentence.
"""

import os
import re
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from browser_helpers import chromium_page, exceptions_on, wait_for_app_idle, wait_for_drawn

from attnviz.draw.describe import describe_scale

pytestmark = pytest.mark.browser
FIRST = "Bright students ask sharp questions"
# holds the selected cell's tokens ('students' looking at 'bright') at other positions: the selection follows the
# tokens to them (query 3, key 2), as a new text does on every page
SECOND = "The bright students slept by the warm fire tonight"


def drawn(page, key: str) -> tuple[list[str], np.ndarray]:
    meta = page.evaluate(f"() => window.attnvizHeatmaps['{key}'].meta()")
    values = page.evaluate(f"() => [...Array(window.attnvizHeatmaps['{key}'].meta().panels).keys()]"
                           f".map(p => window.attnvizHeatmaps['{key}'].values(p))")
    return meta["row_labels"], np.array(values, dtype=np.float64)


def wait_for_labels(page, key: str, labels: list[str], timeout_ms: float = 60_000) -> None:
    """Until the heatmap under key shows these token labels (the assertion below then reads what it drew)."""
    page.wait_for_function(
        "([k, want]) => { const h = window.attnvizHeatmaps && window.attnvizHeatmaps[k];"
        " return h && JSON.stringify(h.meta().row_labels) === JSON.stringify(want); }",
        arg=[key, labels], timeout=timeout_ms, polling=100)


def token_count_shown(page) -> int:
    text = page.locator('[data-testid="stMarkdownContainer"]', has_text="tokens").first.inner_text()
    return int(re.search(r"(\d+) tokens", text)[1])


@pytest.mark.parametrize("selected", [False, True], ids=["no cell selected", "a cell selected"])
def test_type_then_flip_the_switch_without_waiting_draws_the_new_sentence_unscaled(server, toy, selected):
    query = f"model=toy&text={quote(FIRST)}" + ("&sbs_head=1&sbs_query=2&sbs_key=1" if selected else "")
    new = toy.run(SECOND, scale=False)
    with chromium_page() as page:
        page.goto(f"{server}/?{query}")
        wait_for_drawn(page, ["grid", "focus_head"])
        box = page.get_by_label("Text", exact=True)
        box.fill(SECOND)  # not committed: the click below blurs the box, which commits it in the same moment
        page.get_by_text("Scale scores by 1/√d_k").click()
        wait_for_labels(page, "grid", new.labels)
        wait_for_app_idle(page)
        labels, grid = drawn(page, "grid")
        assert labels == new.labels
        np.testing.assert_allclose(grid, new.attentions[0].numpy(), atol=1e-5)  # the new sentence, unscaled
        _, focus = drawn(page, "focus_head")
        np.testing.assert_allclose(focus[0], new.attentions[0, 0].numpy(), atol=1e-5)
        assert token_count_shown(page) == len(new.tokens)
        why = page.locator(".st-key-why").inner_text()
        if selected:  # the selected cell's row, titled with the factor the switch now says: × 1 (unscaled)
            title = page.evaluate("() => window.attnvizHeatmaps.why_row.meta().titles[0]")
            assert "× 1 (unscaled)" in title, title
            assert new.labels[3] == "students" and new.labels[2] == "bright"
            assert f"“{new.labels[3]}”" in why and f"“{new.labels[2]}”" in why
        else:  # the equations, which name the switch's state
            assert describe_scale(1.0, toy.d_head, trained=False) in why
        assert not page.get_by_role("switch", name="Scale scores by 1/√d_k").is_checked()
        assert not exceptions_on(page)
