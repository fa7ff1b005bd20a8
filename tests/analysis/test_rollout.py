"""Attention rollout: identity in, identity out; rows always sum to 1; the product order."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.analysis.rollout import attention_rollout, layer_transition
from attnviz.engine.attention import masked_softmax
from attnviz.errors import AttnvizError


def test_identity_attentions_roll_out_to_identity():
    L, H, n = 3, 4, 6
    attentions = torch.eye(n).expand(L, H, n, n)  # (L, H, n, n)
    rollout = attention_rollout(attentions)
    assert rollout.shape == (L, n, n)
    torch.testing.assert_close(rollout, torch.eye(n).expand(L, n, n))


def test_one_uniform_layer_mixes_half_with_itself():
    # 0.5 · [[.5, .5], [.5, .5]] + 0.5 · I = [[.75, .25], [.25, .75]], rows already sum to 1
    rollout = attention_rollout(torch.full((1, 1, 2, 2), 0.5))
    torch.testing.assert_close(rollout[0], torch.tensor([[0.75, 0.25], [0.25, 0.75]]))


def test_heads_are_averaged_before_the_residual():
    identity = torch.eye(2)
    swap = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    rollout = attention_rollout(torch.stack([identity, swap]).unsqueeze(0))  # (1, 2, 2, 2)
    # heads mean = [[.5, .5], [.5, .5]], then as in the uniform case
    torch.testing.assert_close(rollout[0], torch.tensor([[0.75, 0.25], [0.25, 0.75]]))


def test_layers_multiply_later_layer_on_the_left():
    g = torch.Generator().manual_seed(0)
    attentions = torch.softmax(torch.randn(3, 2, 4, 4, generator=g), -1)  # (L, H, n, n)
    steps = layer_transition(attentions)  # (L, n, n)
    rollout = attention_rollout(attentions)
    torch.testing.assert_close(rollout[0], steps[0].float())
    torch.testing.assert_close(rollout[2], (steps[2] @ steps[1] @ steps[0]).float())
    # the order matters for these matrices: the reverse product is a different answer
    assert not torch.allclose(rollout[2], (steps[0] @ steps[1] @ steps[2]).float(), atol=1e-4)


def test_causal_rollout_stays_causal():
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    attentions = masked_softmax(torch.randn(4, 3, 5, 5), mask)
    rollout = attention_rollout(attentions)
    assert (rollout[:, ~mask] == 0).all()  # no information from the future ever arrives


def test_fully_masked_rows_keep_only_themselves():
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 attends to nothing in any layer
    attentions = masked_softmax(torch.randn(2, 2, 4, 4), mask)
    rollout = attention_rollout(attentions)
    assert not rollout.isnan().any()
    torch.testing.assert_close(rollout[:, 2], torch.tensor([0.0, 0.0, 1.0, 0.0]).expand(2, 4))


def test_residual_share_one_is_identity_whatever_the_attention():
    attentions = torch.softmax(torch.randn(2, 2, 3, 3), -1)
    torch.testing.assert_close(attention_rollout(attentions, residual=1.0), torch.eye(3).expand(2, 3, 3))


@pytest.mark.parametrize("bad", [torch.ones(3, 3), torch.ones(2, 2, 3, 4), torch.ones(0, 2, 3, 3)])
def test_rejects_wrong_shapes(bad):
    with pytest.raises(AttnvizError):
        attention_rollout(bad)


def test_rejects_a_residual_share_outside_zero_one():
    with pytest.raises(AttnvizError):
        attention_rollout(torch.full((1, 1, 2, 2), 0.5), residual=0.0)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**16), st.floats(0.0, 1.0))
def test_rollout_rows_sum_to_one(n_layers, n_heads, n, seed, keep):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < keep  # may leave rows with nothing to attend to
    attentions = masked_softmax(torch.randn(n_layers, n_heads, n, n, generator=g) * 5, mask)
    rollout = attention_rollout(attentions)
    assert rollout.shape == (n_layers, n, n)
    assert torch.isfinite(rollout).all() and (rollout >= 0).all()
    torch.testing.assert_close(rollout.sum(-1), torch.ones(n_layers, n))
