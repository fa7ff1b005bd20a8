"""Model.run(..., layers=k): only the first k layers, each exactly as in a full run."""

import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError

TEXT = "The cat sat on the mat because it was tired."


@pytest.mark.parametrize("k", [1, 3, 6])
def test_the_first_layers_equal_a_full_runs(minilm, k):
    full = minilm.run(TEXT, mask="window:2", scale=0.5, keep=True)
    part = minilm.run(TEXT, mask="window:2", scale=0.5, keep=True, layers=k)
    assert part.attentions.shape == (k, 12, len(full.tokens), len(full.tokens))
    torch.testing.assert_close(part.attentions, full.attentions[:k], atol=0, rtol=0)
    assert len(part.traces) == k
    torch.testing.assert_close(part.traces[-1].x_out, full.traces[k - 1].x_out, atol=0, rtol=0)
    if k == 6:
        torch.testing.assert_close(part.hidden, full.hidden, atol=0, rtol=0)


def test_a_decoder_stops_early_too(tiny_decoder_folder):
    model = attnviz.load_model(str(tiny_decoder_folder("llama")))
    full, part = model.run("the cat sat on the mat"), model.run("the cat sat on the mat", layers=1)
    assert part.attentions.shape[0] == 1
    torch.testing.assert_close(part.attentions[0], full.attentions[0], atol=0, rtol=0)
    assert not torch.equal(part.hidden, full.hidden)  # the residual stream after layer 0, not the final output


@pytest.mark.parametrize("bad", [0, 7, -1, 2.5, "3"])
def test_layers_out_of_range_is_a_clear_error(minilm, bad):
    with pytest.raises(AttnvizError, match="layers must be a whole number from 1 to 6"):
        minilm.run(TEXT, layers=bad)


@pytest.mark.parametrize("k", [1, 4, 6])
def test_weights_only_stops_at_the_last_layers_weights_and_they_are_the_full_runs(minilm, k):
    full = minilm.run(TEXT, mask="causal", scale=0.5, keep=True)
    part = minilm.run(TEXT, mask="causal", scale=0.5, layers=k, weights_only=True)
    torch.testing.assert_close(part.attentions, full.attentions[:k], atol=0, rtol=0)
    torch.testing.assert_close(part.hidden, full.traces[k - 1].x_in[0], atol=0, rtol=0)  # the stream entering layer k−1


def test_weights_only_in_a_decoder(tiny_decoder_folder):
    model = attnviz.load_model(str(tiny_decoder_folder("qwen2")))
    full = model.run("the cat sat on the mat", keep=True)
    part = model.run("the cat sat on the mat", layers=2, weights_only=True)
    torch.testing.assert_close(part.attentions, full.attentions[:2], atol=0, rtol=0)
    torch.testing.assert_close(part.hidden, full.traces[1].x_in[0], atol=0, rtol=0)


@pytest.mark.parametrize("kwargs", [{}, {"layers": 2, "keep": True}])
def test_weights_only_without_layers_or_with_keep_is_a_clear_error(minilm, kwargs):
    with pytest.raises(AttnvizError, match="weights_only needs layers="):
        minilm.run(TEXT, weights_only=True, **kwargs)
