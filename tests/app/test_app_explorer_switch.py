"""The explorer sends each heatmap with the 1/√d_k switch flipped too (ui/heatmap_widget OtherState), so the browser
redraws at once when the switch flips. AppTest: both states hold attnviz's weights, and where the switch decides
nothing, or the text is long, no second state travels."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, run_app, switch_states

from attnviz.analysis.stats import head_entropy, head_max_weight
from ui.scale_swap import SWAP_MAX_TOKENS

TEXT = "red green blue yellow"


@pytest.mark.parametrize("scaled", [True, False])
def test_the_grid_and_the_enlarged_head_carry_both_states_of_the_switch(toy, scaled):
    at = run_app({"model": "toy", "text": TEXT, "layer": "1", "scaled": str(scaled).lower()})
    assert_healthy(at)
    runs = {state: toy.run(TEXT, scale=state) for state in (True, False)}
    assert not np.allclose(runs[True].attentions[1], runs[False].attentions[1])  # the states differ in layer 1
    for key, pick in (("grid", lambda a: a[1]), ("focus_head", lambda a: a[1, 0][None])):
        control, states = switch_states(at, key)
        assert control == "scaled" and list(states) == [scaled, not scaled]  # the switch's state now drawn first
        for state, (_, drawn) in states.items():
            np.testing.assert_allclose(drawn, pick(runs[state].attentions).numpy(), atol=1e-5)
    # each state's head titles (entropy H, mean max weight) are that state's own, not copied from the other
    for state, (meta, _) in switch_states(at, "grid")[1].items():
        entropy, peak = head_entropy(runs[state].attentions[1]), head_max_weight(runs[state].attentions[1])
        assert meta["titles"] == [f"head {h} · H {entropy[h]:.2f} · max {peak[h]:.2f}" for h in range(2)]


def test_the_selected_cells_row_carries_both_states_too(toy):
    at = run_app({"model": "toy", "text": TEXT, "layer": "1"})
    at.session_state["grid"] = {"selection": {"panel": 1, "row": 3, "col": 2}}
    at.run()
    assert_healthy(at)
    control, states = switch_states(at, "why_row")
    assert control == "scaled"
    for state, (meta, drawn) in states.items():
        np.testing.assert_allclose(drawn[0, 0], toy.run(TEXT, scale=state).attentions[1, 1, 3].numpy(), atol=1e-5)
        # the row names its own scale: it is swapped in before the arithmetic above it follows
        assert meta["titles"][0].startswith(f"row 3, scores × {'1/√4' if state else '1 (unscaled)'} · ")


def test_no_second_state_when_a_factor_of_your_own_decides_the_scale(toy):
    at = run_app({"model": "toy", "text": TEXT})
    at.number_input(key="factor").set_value(2.0).run()
    assert_healthy(at)
    assert switch_states(at, "grid") == (None, {})
    assert switch_states(at, "focus_head") == (None, {})


def test_no_second_state_for_a_text_longer_than_the_swap_limit(minilm):
    text = " ".join(["word"] * (SWAP_MAX_TOKENS - 1))  # + [CLS] and [SEP]: one token over the limit
    assert len(minilm.run(text).tokens) == SWAP_MAX_TOKENS + 1
    at = run_app({"text": text})
    assert_healthy(at)
    assert switch_states(at, "grid") == (None, {})
    shorter = run_app({"text": " ".join(["word"] * (SWAP_MAX_TOKENS - 2))})
    assert switch_states(shorter, "grid")[0] == "scaled"
