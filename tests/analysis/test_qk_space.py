"""Query–key space: the joint PCA against known cases, the normalization that leaves every weight as it was,
and the vectors taken from real runs (RoPE and grouped-query attention included)."""

import math

import pytest
import torch
from tolerances import WEIGHTS_REFORMULATED

from attnviz.analysis.qk_space import (
    JointPCA,
    fixed_sign,
    head_queries_and_keys,
    joint_pca,
    nearest_key_agreement,
    shared_space,
    strongest_pairs,
    top_key_agreement,
)
from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.errors import AttnvizError


def test_pca_of_points_on_two_known_axes():
    """Points t·u + s·v with u, v orthonormal in 3-D, t spread 4 times wider than s: the axes are u and v (signs
    fixed: largest entry positive), the coordinates are (t, s) around their mean, the shares 16/17 and 1/17."""
    u = torch.tensor([3.0, 0.0, -4.0]) / 5  # largest entry negative: the fixed sign flips it
    v = torch.tensor([0.0, 1.0, 0.0])
    t = torch.tensor([-4.0, 4.0, -4.0, 4.0])
    s = torch.tensor([-1.0, -1.0, 1.0, 1.0])
    points = t[:, None] * u + s[:, None] * v + torch.tensor([10.0, 10.0, 10.0])  # (4, 3), mean (10, 10, 10)
    pca = joint_pca(points[:2], points[2:])  # two "queries", two "keys"
    torch.testing.assert_close(pca.axes[0], -u)
    torch.testing.assert_close(pca.axes[1], v)
    torch.testing.assert_close(torch.cat([pca.q_xy, pca.k_xy]), torch.stack([-t, s], dim=1))
    assert pca.explained == pytest.approx((16 / 17, 1 / 17))
    torch.testing.assert_close(pca.mean, torch.tensor([10.0, 10.0, 10.0]))


def test_pca_matches_the_covariance_eigenvectors_and_is_the_same_on_every_run():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(7, 5, generator=g), torch.randn(7, 5, generator=g) * 2 + 1
    pca = joint_pca(q, k)
    x = torch.cat([q, k]).double()
    values, vectors = torch.linalg.eigh(torch.cov(x.T))  # ascending
    top = fixed_sign(vectors[:, [-1, -2]].T)
    torch.testing.assert_close(pca.axes.double(), top, atol=1e-5, rtol=0)
    assert pca.explained == pytest.approx(((values[-1] / values.sum()).item(), (values[-2] / values.sum()).item()))
    again = joint_pca(q.clone(), k.clone())
    assert torch.equal(again.q_xy, pca.q_xy) and torch.equal(again.axes, pca.axes)


def test_pca_of_a_one_wide_space_and_of_identical_points():
    pca = joint_pca(torch.tensor([[1.0], [2.0]]), torch.tensor([[3.0]]))
    assert pca.explained == pytest.approx((1.0, 0.0)) and torch.all(pca.q_xy[:, 1] == 0)
    same = joint_pca(torch.ones(2, 3), torch.ones(2, 3))
    assert same.explained == (0.0, 0.0) and torch.all(same.q_xy == 0)
    with pytest.raises(AttnvizError):
        joint_pca(torch.ones(2, 3), torch.ones(2, 4))


@pytest.mark.parametrize("mask", [None, "causal"])
def test_the_shared_space_leaves_every_weight_as_it_was(mask):
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(6, 8, generator=g) * 3, torch.randn(6, 8, generator=g) + 5
    allowed = torch.tril(torch.ones(6, 6, dtype=torch.bool)) if mask else None
    q2, k2 = shared_space(q, k)
    _, before = scaled_dot_product_attention(q, k, k, mask=allowed)
    _, after = scaled_dot_product_attention(q2, k2, k2, mask=allowed)
    torch.testing.assert_close(after, before, atol=WEIGHTS_REFORMULATED, rtol=0)
    assert q2.norm(dim=1).mean() == pytest.approx(float(k2.norm(dim=1).mean()), rel=1e-5)
    # the keys' mean sits on the queries' mean (before the common scaling by a and 1/a)
    a = math.sqrt(float((k - k.mean(0) + q.mean(0)).norm(dim=1).mean() / q.norm(dim=1).mean()))
    torch.testing.assert_close(k2.mean(0) * a, q2.mean(0) / a, atol=1e-5, rtol=0)


def test_strongest_pairs_and_the_nearest_key_count():
    w = torch.tensor([[0.7, 0.3, 0.0], [0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    assert [(p.query, p.key) for p in strongest_pairs(w, 0.5)] == [(0, 0), (2, 2), (1, 0), (1, 1)]
    assert strongest_pairs(w, 0.8) == []

    plane = JointPCA(q_xy=torch.tensor([[0.0, 0.0], [5.0, 0.0], [9.0, 0.0]]),
                     k_xy=torch.tensor([[0.1, 0.0], [9.0, 1.0], [5.0, 1.0]]), explained=(1.0, 0.0),
                     axes=torch.eye(2), mean=torch.zeros(2))
    assert nearest_key_agreement(plane, w) == (1, 3)  # query 0's nearest is key 0 (its top); 1 -> 2, 2 -> 1
    causal = torch.tril(torch.ones(3, 3, dtype=torch.bool))
    assert nearest_key_agreement(plane, w, causal) == (1, 3)  # query 1 may not see key 2: nearest allowed is 1


def test_queries_and_keys_are_the_ones_the_layer_multiplied(bundled_model):
    res = bundled_model.run("The animal didn't cross the street because it was too tired.", keep=True)
    qk = head_queries_and_keys(bundled_model, res, 3, 1)
    assert not qk.rope and qk.kv_head == 1 and qk.q.shape == (16, 32)
    _, weights = scaled_dot_product_attention(qk.q, qk.k, qk.k, scale=res.scale)
    torch.testing.assert_close(weights, res.attentions[3, 1], atol=1e-5, rtol=0)
    with pytest.raises(AttnvizError, match="no head 12"):
        head_queries_and_keys(bundled_model, res, 0, 12)
    with pytest.raises(AttnvizError, match="keep=True"):
        head_queries_and_keys(bundled_model, bundled_model.run("a b"), 0, 0)


def test_a_rope_model_gives_its_rotated_queries_and_the_keys_of_its_kv_head(tiny_llama):
    text = "red green blue house music red green blue"
    res = tiny_llama.run(text, keep=True)
    qk = head_queries_and_keys(tiny_llama, res, 1, 3)  # 4 query heads over 2 K/V heads: head 3 reads K/V head 1
    assert qk.rope and (qk.kv_head, qk.n_kv_heads) == (1, 2)
    _, weights = scaled_dot_product_attention(qk.q, qk.k, qk.k, mask=res.mask, scale=res.scale)
    torch.testing.assert_close(weights, res.attentions[1, 3], atol=1e-5, rtol=0)


def test_top_key_agreement_counts_dot_products_and_cosines_by_hand():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    # key 0 points the way of query 0 but is short; key 1 is long and 60° off: query 0's largest q·k is key 1's
    k = torch.tensor([[0.5, 0.0], [2.0, 3.0]])
    scores = q @ k.T  # [[0.5, 2.0], [0.0, 3.0]]
    weights = torch.softmax(scores, dim=-1)
    by_dot, by_cosine, live = top_key_agreement(q, k, weights)
    assert (by_dot, live) == (2, 2)
    # query 0: most weight on key 1, largest cosine key 0 (cos 1 vs 2/√13): a miss; query 1: key 1 both ways
    assert by_cosine == 1
    allowed = torch.tensor([[True, False], [True, True]])
    masked = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    assert top_key_agreement(q, k, masked, allowed) == (2, 2, 2)
