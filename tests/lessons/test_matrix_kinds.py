"""The lesson matrices that pages draw with a magnitude or mask scale fit that kind: never negative, or only 0 and −∞.

The kind of each is chosen where the page calls the heatmap (app_pages/); these tests hold the lessons to what that
choice assumes, so a lesson that starts returning a signed matrix fails here, not as a wrong picture.
"""

import numpy as np
import pytest
import torch

from attnviz.analysis.head_scores import induction_scores, previous_token_scores
from attnviz.draw.heatmap_payload import decode_payload, heatmap_payload
from attnviz.engine.masks import causal_mask
from attnviz.errors import AttnvizError
from attnviz.lessons.additive import scoring as sc
from attnviz.lessons.efficient.compare import compare, random_qkv
from attnviz.lessons.efficient.methods import METHODS
from attnviz.lessons.masks.gallery import additive_matrix, gallery_masks, gallery_specs
from attnviz.lessons.multihead.projection import output_projection

TEXT = "red green blue red green blue"


def drawn_as(matrix, kind: str, **options) -> np.ndarray:
    """The matrix as a payload of that kind draws it (raises where it does not fit the kind)."""
    rows, cols = np.asarray(matrix).shape[-2:]
    payload = heatmap_payload(matrix, [str(r) for r in range(rows)], [str(c) for c in range(cols)], titles=["t"],
                              kind=kind, **options)
    return decode_payload(payload)[1][0]


def test_additive_minus_dot_product_difference_is_a_magnitude():
    q, k, v = sc.random_qkv(6, 8, seed=4)
    both = sc.compare_scorings(q, k, v, sc.seeded_additive_weights(8, 8, 6, 1), causal_mask(6))
    drawn = drawn_as(both.difference, "magnitude", limit=1.0)
    assert np.abs(drawn - both.difference.numpy()).max() < 1e-4


def test_efficient_attentions_weight_delta_is_signed_and_its_size_a_magnitude():
    method = METHODS["linformer"]
    cmp = compare(method, *random_qkv(21, 8, seed=2), {kn.key: kn.default for kn in method.knobs}, None)
    assert (cmp.weight_delta < 0).any()  # method − reference: signed as it is, so only |Δ| is a magnitude
    with pytest.raises(AttnvizError, match="never negative"):
        drawn_as(cmp.weight_delta, "magnitude")
    drawn_as(cmp.weight_delta.abs(), "magnitude", limit=max(cmp.max_weight_delta, 0.01))


def test_each_heads_contribution_norms_are_a_magnitude(toy):
    norms = output_projection(toy, toy.run(TEXT, keep=True), 1).contribution_norms  # (nh, T)
    np.testing.assert_allclose(drawn_as(norms, "magnitude"), norms.numpy(), atol=1e-3 * float(norms.max()))


def test_head_scores_are_weights_averages_from_0_to_1(toy):
    attentions = toy.run(TEXT).attentions
    for scores in (previous_token_scores(attentions), induction_scores(attentions, period=3)):
        assert float(scores.min()) >= 0 and float(scores.max()) <= 1
        drawn_as(scores, "magnitude", limit=1.0)


def test_every_gallery_mask_is_a_mask_whether_bool_or_m():
    n = 8
    specs = {kind: spec for kind, spec in gallery_specs().items() if kind != "custom"}  # custom: typed in the page
    for kind, mask in gallery_masks(specs, n).items():
        m = additive_matrix(mask, n)
        np.testing.assert_array_equal(drawn_as(m, "mask"), m, err_msg=kind)
        if mask is not None:  # the bool mask itself (True = may attend) draws the same
            np.testing.assert_array_equal(drawn_as(torch.as_tensor(mask).reshape(n, n), "mask"), m, err_msg=kind)
