"""One meaning of `mask` beside a model (attnviz/engine/mask_rule.py): the model's own mask always applies, as in
model.run, unless the caller passes NOTHING_MASKED. Checked on the tiny Llama, the shipped causal model, through every
function of attnviz's that runs a model with a mask."""

import pytest
import torch

import attnviz
from attnviz import NOTHING_MASKED, AttnvizError
from attnviz.analysis.ablation import ablated_forward, clean_run, clean_streams, mean_head_outputs
from attnviz.analysis.ablation_effects import repeated_half_losses
from attnviz.analysis.repeats import repeated_random_batch
from attnviz.engine.masks import causal_mask

TEXT = "the cat sat on the mat . the cat sat on the mat ."


def repeated_half_loss(model, batch, mask) -> float:
    """The mean next-token loss in nats on the second copy, from ablated_forward with nothing ablated."""
    hidden, _, _ = ablated_forward(model, batch.ids, mask)
    log_probs = torch.log_softmax(model.logits(hidden).float(), dim=-1)  # (N, T, V)
    nll = -log_probs[:, :-1].gather(2, batch.ids[:, 1:, None])[..., 0]  # (N, T - 1)
    return float(nll[:, batch.second_copy_targets].mean())


def looks_ahead(weights: torch.Tensor) -> float:
    """The most weight any query puts on a key after it: 0 under a causal mask. weights (..., T, T)."""
    T = weights.shape[-1]
    return float(weights[..., ~causal_mask(T)].abs().max())


@pytest.fixture(scope="module")
def batch(tiny_llama):
    return repeated_random_batch(tiny_llama, n_seqs=16, half=20, seed=0)


def test_ablated_forward_with_no_mask_keeps_the_models_causal_mask(tiny_llama, batch):
    T = batch.ids.shape[1]
    own = repeated_half_loss(tiny_llama, batch, None)
    assert own == repeated_half_loss(tiny_llama, batch, tiny_llama.builtin_mask(T))  # to the bit
    assert own == float(repeated_half_losses(tiny_llama, batch).mean())
    assert own < 2.0  # it copies the first half (1.36 nats on this batch; chance is ln V)
    assert repeated_half_loss(tiny_llama, batch, NOTHING_MASKED) > 5.0  # asked for in so many words: it sees ahead


def test_every_function_that_runs_a_model_with_a_mask_applies_its_own(tiny_llama):
    ids = torch.tensor([tiny_llama.encode(TEXT).ids])  # (1, T)
    reference = tiny_llama.run(TEXT).attentions  # (L, H, T, T)
    with torch.inference_mode():
        forward = torch.stack([w[0] for w in tiny_llama.forward(ids, None, True, False)[1]]).float()
    ablated = torch.stack([w[0] for w in ablated_forward(tiny_llama, ids, None)[1]]).float()
    kept = torch.stack([t.weights[0] for t in clean_run(tiny_llama, ids, None).traces]).float()
    for weights in (forward, ablated, kept):
        assert looks_ahead(weights) == 0.0
        torch.testing.assert_close(weights, reference, rtol=0, atol=1e-6)
    nothing = torch.stack([w[0] for w in ablated_forward(tiny_llama, ids, NOTHING_MASKED)[1]]).float()
    assert looks_ahead(nothing) > 0.01
    for helper in (clean_streams, lambda m, i, mask: mean_head_outputs(m, i, mask, torch.ones_like(i, dtype=torch.bool))):
        assert not torch.equal(helper(tiny_llama, ids, None)[-1], helper(tiny_llama, ids, NOTHING_MASKED)[-1])
        assert torch.equal(helper(tiny_llama, ids, None)[-1], helper(tiny_llama, ids, tiny_llama.builtin_mask(ids.shape[1]))[-1])


def test_a_mask_is_added_to_the_models_own_and_nothing_masked_removes_both(tiny_llama):
    own = tiny_llama.run(TEXT)
    T = len(own.tokens)
    assert torch.equal(own.mask, causal_mask(T))
    assert torch.equal(tiny_llama.run(TEXT, mask="none").attentions, own.attentions)
    window = tiny_llama.run(TEXT, mask="window:2")
    assert torch.equal(window.mask, causal_mask(T) & (torch.arange(T)[:, None] - torch.arange(T)[None] <= 2))
    bare = tiny_llama.run(TEXT, mask=NOTHING_MASKED)
    assert bare.mask is None and looks_ahead(bare.attentions) > 0.01
    padded = torch.ones(1, 1, 1, T, dtype=torch.bool)  # a batch's padding mask, nothing padded
    with torch.inference_mode():
        weights = tiny_llama.forward(torch.tensor([own.token_ids]), padded, True, False)[1]
    assert looks_ahead(torch.stack([w[0] for w in weights])) == 0.0


def test_an_encoder_has_no_mask_of_its_own(toy):
    assert torch.equal(toy.run(TEXT).attentions, toy.run(TEXT, mask=NOTHING_MASKED).attentions)


def test_a_mask_that_is_none_of_these_is_said(tiny_llama):
    ids = torch.tensor([tiny_llama.encode(TEXT).ids])
    with pytest.raises(AttnvizError, match="NOTHING_MASKED"):
        ablated_forward(tiny_llama, ids, 1)
    with pytest.raises(AttnvizError, match="boolean"):
        ablated_forward(tiny_llama, ids, torch.ones(ids.shape[1], ids.shape[1]))


def test_the_public_api_names_it():
    assert attnviz.NOTHING_MASKED is NOTHING_MASKED and "NOTHING_MASKED" in attnviz.__all__
