"""ui.runs.run_through: a page that draws one layer gets a run up to that layer, equal to the whole run's to the bit,
and the whole run where the truth check makes it anyway or it is held already."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import torch
from apptest_helpers import assert_healthy, drawn_heatmap, run_app

from ui.runs import RUNS, held_run, run_for, run_through

TEXT = "The dog chased the cat because it was hungry."
SPEC = ""  # the bundled all-MiniLM-L6-v2


def test_another_mask_and_scale_run_only_as_far_as_the_layer_shown():
    RUNS._values.clear()
    part = run_through(SPEC, "cpu", TEXT, "causal", False, 2)
    assert part.attentions.shape[0] == 3  # layers 0, 1 and 2
    assert held_run(SPEC, "cpu", TEXT, "causal", False) is None  # the whole run was not made
    whole = run_for(SPEC, "cpu", TEXT, "causal", False)
    assert torch.equal(part.attentions, whole.attentions[:3])
    assert (part.tokens, part.labels, part.scale, part.notes) == (whole.tokens, whole.labels, whole.scale, whole.notes)
    assert torch.equal(part.mask, whole.mask)


def test_a_held_whole_run_is_used_and_the_truths_settings_make_the_whole_run():
    RUNS._values.clear()
    whole = run_for(SPEC, "cpu", TEXT, "window:1", 0.5)
    assert run_through(SPEC, "cpu", TEXT, "window:1", 0.5, 0) is whole
    default = run_through(SPEC, "cpu", TEXT, "none", True, 0)  # the truth check runs the whole model here anyway
    assert default is held_run(SPEC, "cpu", TEXT, "none", True)
    assert default.attentions.shape[0] == 6
    # a factor of 1.0 equals True in Python, but it is not the 1/√d_k the check runs at
    assert run_through(SPEC, "cpu", TEXT, "none", 1.0, 0).attentions.shape[0] == 1


def test_the_explorer_at_another_mask_draws_its_layer_exactly_without_the_whole_run(minilm):
    """A class's masks and switches on the explorer: the heatmaps hold the whole run's weights (to the payload's
    step), and the whole model ran only at the truth check's settings (before, every mask and scale ran all six
    layers)."""
    RUNS._values.clear()
    at = run_app({"text": TEXT, "layer": "1", "mask": "causal", "scaled": "false"})
    assert_healthy(at)
    whole = minilm.run(TEXT, mask="causal", scale=False)
    drawn, _, _ = drawn_heatmap(at, "focus_head")
    np.testing.assert_allclose(drawn, whole.attentions[1, 0].numpy(), rtol=0, atol=0.5 / 65534 + 1e-9)
    assert held_run(SPEC, "cpu", TEXT, "causal", False) is None
    assert held_run(SPEC, "cpu", TEXT, "none", True) is not None  # the truth check's
