"""Sliding windows that differ between layers (Qwen2's max_window_layers) are said, layer by layer."""

from attnviz.draw.describe import describe_layer_windows


def test_layers_with_different_windows_are_listed_in_stretches():
    sentence = describe_layer_windows((None, None, 4, 4, 4))
    assert "layers 0–1: full causal attention" in sentence
    assert "layers 2–4: a sliding window of 4 keys (itself and the 3 before it)" in sentence


def test_one_layer_alone_is_named_in_the_singular():
    assert "layer 1: a sliding window of 3 keys" in describe_layer_windows((None, 3))
    assert "layer 0: full causal attention" in describe_layer_windows((None, 3))


def test_nothing_is_said_when_every_layer_agrees():
    assert describe_layer_windows(()) == ""
    assert describe_layer_windows((None, None)) == ""
    assert describe_layer_windows((5, 5, 5)) == ""  # the same window everywhere: describe_mask says it
