"""Side B of a comparison: presets change one setting, widget values round-trip, the sentence reads right."""

import pytest

from attnviz.errors import AttnvizError
from attnviz.lessons.compare.sides import (
    PRESETS,
    SideConfig,
    apply_preset,
    describe_change,
    same_settings,
    setting_changes,
    side_from_values,
    widget_values,
)

A = SideConfig("", "The cat sat.", "none", True, layer=1, head=2)


def test_each_preset_changes_exactly_one_setting():
    assert apply_preset("scaled vs unscaled", A) == SideConfig("", "The cat sat.", "none", False, 1, 2)
    assert apply_preset("bidirectional vs causal", A).mask_spec == "causal"
    assert apply_preset("full vs sliding window", A).mask_spec == "window:2"
    for preset in PRESETS:
        assert len(setting_changes(A, apply_preset(preset, A))) == 1


def test_presets_flip_when_a_already_has_the_setting():
    assert apply_preset("scaled vs unscaled", SideConfig("", "x", "none", False)).scale is True
    assert apply_preset("scaled vs unscaled", SideConfig("", "x", "none", 0.5)).scale is True
    assert apply_preset("bidirectional vs causal", SideConfig("", "x", "causal", True)).mask_spec == "none"
    assert apply_preset("full vs sliding window", SideConfig("", "x", "window:2", True)).mask_spec == "none"
    with pytest.raises(AttnvizError, match="Unknown comparison preset"):
        apply_preset("bigger vs smaller", A)


@pytest.mark.parametrize("side", [
    A,
    SideConfig("toy", "a b", "window:3", False, 0, 1),
    SideConfig("gpt2", "a b", "global:1:0,2", 0.25),
    SideConfig("", "a", "random:0.4:7", True),
    SideConfig("", "a", "padding:2", True),
    SideConfig("", "a", "strided:4", True),
    SideConfig("", "a", "custom:10/11", True),
    SideConfig("", "a", "custom:", True),
    SideConfig("", "a", "causal", True),
])
def test_widget_values_round_trip(side):
    assert side_from_values(widget_values(side)) == side


def test_missing_widget_values_fall_back_to_defaults():
    side = side_from_values({"text": "hi", "mask": "window", "window": None, "layer": None})
    assert side == SideConfig("", "hi", "window:2", True, 0, 0)
    assert side_from_values({"model": "all-MiniLM-L6-v2"}).model_spec == ""


def test_same_settings_ignores_layer_and_head_but_not_scale_type():
    assert same_settings(A, SideConfig("", "The cat sat.", "none", True, 5, 5))
    assert not same_settings(A, SideConfig("", "The cat sat.", "none", 1.0))
    assert not same_settings(A, None)


def test_sentence_names_the_change_and_its_effect():
    b = apply_preset("scaled vs unscaled", A)
    text = describe_change(A, b, entropy_change=0.5, max_weight_change=-0.2, mean_kl=0.123)
    assert "only in the scaling (scores divided by √d_k → no scaling)" in text
    assert "less evenly (entropy -0.50 nats)" in text and "peak higher (max weight +0.20)" in text
    assert "0.123 nats of KL" in text
    assert "same configuration" in describe_change(A, A, 0.0, 0.0)
    two = describe_change(A, SideConfig("toy", "other", "none", True, 1, 2), 0.0, 0.0)
    assert "the model (bundled → toy) and the text" in two and "unchanged" in two


def test_sentence_says_an_infinite_kl_is_infinite():
    b = apply_preset("bidirectional vs causal", A)
    text = describe_change(A, b, entropy_change=0.5, max_weight_change=-0.2, mean_kl=float("inf"))
    assert "infinite" in text and "zero weight" in text and "inf nats" not in text
