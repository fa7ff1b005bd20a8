"""The masks lab's math and figures: pair counts against mask sums, the M panel, the padding helpers."""

import math

import numpy as np
import pytest
import torch

from attnviz.draw.line_chart import chart_lines
from attnviz.engine.mask_kinds import MASKS, parse_mask
from attnviz.lessons.masks.gallery import (
    attended_pairs,
    attended_pairs_chart,
    attended_pairs_curves,
    attended_pairs_formula,
    cost_grid,
    cost_lesson,
    gallery_masks,
    gallery_specs,
    pad_column_weight,
    real_rows_difference,
)

PARAMS = {"window": 2, "stride": 3, "n_pad": 2, "keep": 0.3}


def test_gallery_offers_every_mask_kind_in_order():
    specs = gallery_specs(custom="custom:10/11")
    assert list(specs) == list(tuple(MASKS))
    assert specs["window"] == "window:2" and specs["custom"] == "custom:10/11"


KIND_AND_N = [
    (kind, n)
    for kind in ["none", "causal", "padding", "window", "strided", "global"]
    for n in [1, 2, 3, 7, 8, 16, 33]
    if not (kind == "padding" and n < PARAMS["n_pad"])  # a text needs at least as many tokens as its [PAD]s
]


@pytest.mark.parametrize("kind, n", KIND_AND_N)
def test_closed_form_counts_equal_the_mask_sums(kind, n):
    spec = gallery_specs(**{k: v for k, v in PARAMS.items() if k != "keep"})[kind]
    mask = parse_mask(spec, n)
    assert attended_pairs_formula(kind, n, **PARAMS) == attended_pairs(mask, n)


@pytest.mark.parametrize("w", [0, 1, 5, 20])
@pytest.mark.parametrize("globals_", [(0,), (0, 3), (2, 3, 9)])
def test_global_local_formula_counts_overlaps_once(w, globals_):
    n = 12
    spec = f"global:{w}:{','.join(map(str, globals_))}"
    assert attended_pairs_formula("global", n, window=w, global_tokens=globals_) == parse_mask(spec, n).sum().item()


def test_textbook_counts():
    n = 10
    assert attended_pairs(None, n) == n * n
    assert attended_pairs_formula("none", n) == 100
    assert attended_pairs_formula("causal", n) == n * (n + 1) / 2
    assert attended_pairs_formula("window", 100, window=2) == 100 * 5 - 2 * 3  # n(2w+1) minus the two ends
    assert math.isnan(attended_pairs_formula("custom", n))


def test_random_formula_is_the_expected_count():
    n, keep = 200, 0.3
    counts = [parse_mask(f"random:{keep}:{seed}", n).sum().item() for seed in range(5)]
    expected = attended_pairs_formula("random", n, keep=keep)
    assert abs(np.mean(counts) - expected) < 0.02 * expected


def test_curves_cover_every_sized_mask_and_full_grows_quadratically():
    ns = np.array([8, 16, 512])
    curves = attended_pairs_curves(ns, **PARAMS)
    assert set(curves) == set(tuple(MASKS)) - {"custom"}
    assert curves["none"].tolist() == [64, 256, 512 * 512]
    assert curves["window"][-1] < 0.02 * curves["none"][-1]
    chart = attended_pairs_chart(ns, curves, current_n=16, log_axes=True)
    drawn = chart_lines(chart)
    assert list(drawn) == [MASKS[k].title for k in curves]
    np.testing.assert_array_equal(drawn[MASKS["none"].title], curves["none"])
    assert "your text: n = 16" in chart and ">100k<" in chart  # log axes: decade ticks up to 512² ≈ 262k


def test_the_cost_grid_holds_both_ends_and_the_users_n_whose_dots_are_exact():
    ns = cost_grid(13)
    assert ns[0] == 8 and ns[-1] == 512 and 13 in ns and len(ns) <= 100
    assert np.all(np.diff(ns) > 0) and np.diff(ns).max() <= 12  # evenly spaced enough for a smooth n² on linear axes
    curves = attended_pairs_curves(ns, **PARAMS)
    chart = attended_pairs_chart(ns, curves, current_n=13)
    full = attended_pairs_formula("none", 13)
    assert f"{MASKS['none'].title}: n (tokens) = 13, (query, key) pairs scored = {full:,.0f}</title>" in chart
    assert len(chart) < 25_000  # the page sends it as markdown, which the browser parses on every draw


def test_cost_lesson_quotes_the_numbers():
    text = cost_lesson(512, 2)
    assert "262,144" in text and "2,554" in text


def test_gallery_masks_parse_every_spec():
    masks = gallery_masks(gallery_specs(custom="custom:" + "/".join(["1" * 6] * 6)), 6)
    assert masks["none"] is None and masks["causal"].shape == (6, 6)


def test_padding_helpers():
    w = torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])
    assert pad_column_weight(w, 1) == pytest.approx(0.4)  # a key column that is not masked shows its weight
    assert pad_column_weight(w[:2], 1) == 0.0
    assert pad_column_weight(w, 0) == 0.0
    alone = torch.tensor([[0.5, 0.5], [0.2, 0.7]])
    assert real_rows_difference(w, alone) == pytest.approx(0.1)


def test_cost_lesson_says_a_dense_mask_saves_no_compute():
    text = cost_lesson(512, 2)
    assert "computes every one of the n² scores anyway" in text and "Efficient attention page" in text
    assert "p·n²" in text and MASKS["random"].title == "random (Bernoulli per pair)"
