"""The explorer's truth badge: what the check compared, and when the heatmaps on screen are at other settings."""

import torch

from attnviz.engine.masks import causal_mask
from attnviz.lessons.explorer.truth import (
    badge_sentence,
    checked_settings,
    mask_differs,
    mask_words,
    unchecked_sentence,
    unchecked_settings,
)


def test_the_checked_settings_are_the_models_own():
    assert checked_settings(False, 32) == "no mask, scores divided by √d_k = √32"
    assert checked_settings(True, 64) == "its built-in causal mask, scores divided by √d_k = √64"
    assert "sliding window of 4 keys" in checked_settings(True, 16, builtin_window=4)
    assert badge_sentence(3e-7, checked_settings(True, 64)).startswith(
        "✓ matches transformers at the trained settings (its built-in causal mask, scores divided by √d_k = √64)")


def test_a_mask_differs_when_it_lets_other_pairs_through_than_the_models_own():
    causal = causal_mask(4)
    assert not mask_differs(None, None) and not mask_differs(causal, causal)
    assert mask_differs(causal, None)  # an encoder under a causal mask
    assert not mask_differs(torch.ones(4, 4, dtype=torch.bool), None)  # a mask that forbids nothing is no mask
    assert mask_differs(causal & ~torch.eye(4, dtype=torch.bool), causal)


def test_what_the_heatmaps_use_that_the_check_did_not():
    assert unchecked_settings(False, "none", 32**-0.5, 32) == [] and unchecked_sentence([]) is None
    parts = unchecked_settings(True, "window:2", 1.0, 32)
    assert parts == ["a sliding window mask (window:2)", "no scaling (factor 1)"]
    assert unchecked_sentence(parts).startswith("These heatmaps use a sliding window mask (window:2) and no scaling")
    assert unchecked_settings(False, "none", 0.5, 16) == ["the scale factor 0.5 instead of 1/√16 ≈ 0.250"]
    assert mask_words("custom:1100,1110,1111,1111") == "a custom mask"
