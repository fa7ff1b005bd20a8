"""The attention-as-a-layer lesson: the picture, the region features, the four steps and the permutation check."""

import math

import numpy as np
import pytest
import torch

from attnviz.draw.plotting import PICTURES_AT_TOP
from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.errors import AttnvizError
from attnviz.lessons.attention_layer import figures as fg
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import FEATURES, load_picture, parse_grid, picture_regions, region_features
from attnviz.lessons.attention_layer.scene import HEIGHT, WIDTH, draw_scene
from attnviz.lessons.attention_layer.upward import upward_pull, upward_sentence


def test_the_shipped_picture_is_what_the_script_draws():
    shipped = load_picture()
    assert shipped.shape == (HEIGHT, WIDTH, 3) and shipped.dtype == np.uint8
    np.testing.assert_array_equal(draw_scene(), shipped)


def test_features_of_a_known_tiny_picture():
    """A 2 × 4 picture: a red and a blue 2 × 2 half; cut 1 × 2 and 2 × 1."""
    pixels = np.zeros((2, 4, 3), dtype=np.uint8)
    pixels[:, :2] = (255, 0, 0)
    pixels[:, 2:] = (0, 0, 255)
    pixels[1, 3] = (0, 0, 51)  # one darker pixel: the right cell's mean blue is (3 · 255 + 51) / 4 / 255
    r = region_features(pixels, 1, 2)
    assert r.labels == ["r0c0", "r0c1"] and r.x.shape == (2, len(FEATURES))
    np.testing.assert_allclose(r.x[0].numpy(), [1, 0, 0, 0.5, 0.25])
    np.testing.assert_allclose(r.x[1].numpy(), [0, 0, (3 * 255 + 51) / 4 / 255, 0.5, 0.75])
    r = region_features(pixels, 2, 1)  # two rows: height 0.75 on top, 0.25 below; across 0.5
    np.testing.assert_allclose(r.x[:, 3:].numpy(), [[0.75, 0.5], [0.25, 0.5]])
    np.testing.assert_allclose(r.x[0, :3].numpy(), [0.5, 0, 0.5])
    np.testing.assert_allclose(r.x[1, :3].numpy(), [0.5, 0, (255 + 51) / 2 / 2 / 255])


def test_uneven_cells_cover_the_picture():
    r = picture_regions(7, 9)
    assert r.row_edges[0] == 0 and r.row_edges[-1] == HEIGHT and r.col_edges[-1] == WIDTH
    assert r.n == 63 and len(r.labels) == 63 and r.labels[10] == "r1c1"
    assert bool(((r.x >= 0) & (r.x <= 1)).all())


@pytest.mark.parametrize("text", ["", "6", "axb", "0x4", "13x2", "3x17", "-1x2", "6x8x2"])
def test_impossible_grids_are_clear_errors(text):
    with pytest.raises(AttnvizError, match="grid"):
        parse_grid(text)


def test_grids_as_written():
    assert parse_grid("6x8") == (6, 8) and parse_grid(" 3 × 4 ") == (3, 4) and parse_grid("12*16") == (12, 16)


@pytest.mark.parametrize(("text", "message"), [("", "empty"), ("  ", "empty"), ("1, 2, x, 4, 5", "not a list"),
                                               ("1, 2, 3", "has 3 numbers"), ("1, 2, 3, 4, 1e9", "between")])
def test_bad_custom_queries_are_clear_errors(text, message):
    with pytest.raises(AttnvizError, match=message):
        qs.feature_query(qs.CUSTOM, 1.0, text)


def test_queries_and_strength():
    np.testing.assert_allclose(qs.feature_query("sun", 2.0).numpy(), [2, 2, -4, 2, 0])
    np.testing.assert_allclose(qs.feature_query(qs.CUSTOM, 3.0, "1 −1 0 0 0.5").numpy(), [3, -3, 0, 0, 1.5])
    assert qs.key_query("sky", 1.0).shape == (len(qs.KEY_FEATURES),)
    with pytest.raises(AttnvizError, match="no query named"):
        qs.feature_query("moon", 1.0)
    with pytest.raises(AttnvizError, match="strength"):
        qs.feature_query("sun", -1.0)


@pytest.fixture(scope="module")
def x():
    return picture_regions(6, 8).x  # (48, 5)


def test_one_query_shapes_and_equations(x):
    q = qs.feature_query("sun", 10.0)
    a = ly.one_query(x, q)
    assert a.scores.shape == (1, 48) and a.weights.shape == (1, 48) and a.outputs.shape == (1, 5)
    e = torch.stack([q @ x[j] for j in range(48)]) / math.sqrt(5)  # e_j = q·x_j/√D, one region at a time
    np.testing.assert_allclose(a.scores[0].numpy(), e.numpy(), rtol=1e-12)
    np.testing.assert_allclose(float(a.weights.sum()), 1.0, rtol=1e-12)
    y = sum(a.weights[0, j] * x[j] for j in range(48))  # y = Σ_j a_j x_j
    np.testing.assert_allclose(a.outputs[0].numpy(), y.numpy(), rtol=1e-12)


def test_the_sun_query_finds_the_sun(x):
    """The region with the most weight for 'yellow, high up' is the one holding most of the sun (row 1, col 6)."""
    for weights in (ly.one_query(x, qs.feature_query("sun", 10.0)).weights,
                    ly.keys_and_values(x, qs.key_query("sun", 10.0)[None]).weights):
        assert int(weights.argmax()) == 1 * 8 + 6


def test_steps_agree_with_the_engines_attention(x):
    """Each step is the engine's scaled dot-product attention with the right queries, keys and values."""
    queries = qs.all_feature_queries(10.0)  # (M, D)
    b = ly.many_queries(x, queries)
    out, w = scaled_dot_product_attention(queries, x, x)
    np.testing.assert_allclose(b.weights.numpy(), w.numpy(), atol=1e-12)
    np.testing.assert_allclose(b.outputs.numpy(), out.numpy(), atol=1e-12)
    assert b.weights.shape == (5, 48)
    np.testing.assert_allclose(b.weights.sum(-1).numpy(), np.ones(5), rtol=1e-12)
    c = ly.keys_and_values(x, qs.all_key_queries(10.0))
    assert c.keys.shape == (48, 4) and c.values.shape == (48, 3) and c.outputs.shape == (5, 3)
    out, w = scaled_dot_product_attention(qs.all_key_queries(10.0), x @ ly.W_K, x @ ly.W_V)
    np.testing.assert_allclose(c.weights.numpy(), w.numpy(), atol=1e-12)
    np.testing.assert_allclose(c.outputs.numpy(), out.numpy(), atol=1e-12)
    d = ly.self_attention(x, ly.query_weights(10.0))
    assert d.weights.shape == (48, 48) and d.outputs.shape == (48, 3)
    w_q = 10.0 * ly.W_K.clone()
    w_q[:, 2] = 0  # no brightness in the queries
    out, w = scaled_dot_product_attention(x @ w_q, x @ ly.W_K, x @ ly.W_V)
    np.testing.assert_allclose(d.weights.numpy(), w.numpy(), atol=1e-12)
    np.testing.assert_allclose(d.weights.sum(-1).numpy(), np.ones(48), rtol=1e-12)


def test_in_self_attention_grass_looks_at_grass_and_sky_at_sky(x):
    w = ly.self_attention(x, ly.query_weights(10.0)).weights  # (48, 48)
    assert int(w[5 * 8 + 0].argmax()) // 8 >= 4  # a grass region (r5c0): its top region is in the bottom two rows
    assert int(w[0].argmax()) // 8 == 0  # a sky region (r0c0): its top region is in the top row


def test_hand_made_projections_mean_what_they_say():
    r, g, b = 0.9, 0.2, 0.3
    k = torch.tensor([r, g, b, 0.7, 0.1], dtype=torch.float64) @ ly.W_K
    np.testing.assert_allclose(k.numpy(), [r - b, g - (r + b) / 2, (r + g + b) / 3, 0.7])
    v = torch.tensor([r, g, b, 0.7, 0.1], dtype=torch.float64) @ ly.W_V
    np.testing.assert_allclose(v.numpy(), [r, g, b])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_self_attention_is_permutation_equivariant(x, seed):
    check = ly.permutation_check(x, ly.query_weights(10.0), seed)
    assert not bool((check.order == torch.arange(48)).all())
    assert sorted(check.order.tolist()) == list(range(48))
    assert check.output_difference < 1e-6 and check.weight_difference < 1e-6
    # the check can fail: the outputs not moved back differ by far more
    assert float((check.attended_shuffled.outputs - check.attended.outputs).abs().max()) > 1e-2


def test_outside_queries_get_the_same_outputs_from_shuffled_regions(x):
    """What is equivariant is the self-attention layer: outside queries (step c) do not move with the regions,
    and their outputs stay the same (invariance) when the regions are shuffled."""
    order = ly.shuffled_order(48, 0)
    q = qs.all_key_queries(10.0)
    np.testing.assert_allclose(ly.keys_and_values(x[order], q).outputs.numpy(),
                               ly.keys_and_values(x, q).outputs.numpy(), atol=1e-12)


def test_one_region_is_the_whole_picture():
    r = picture_regions(1, 1)
    a = ly.one_query(r.x, qs.feature_query("sun", 10.0))
    assert float(a.weights[0, 0]) == 1.0
    np.testing.assert_allclose(a.outputs[0].numpy(), r.x[0].numpy())
    check = ly.permutation_check(r.x, ly.query_weights(10.0), 0)
    assert check.output_difference == 0.0


def test_the_upward_lean_is_measured_by_hand(x):
    """Step d's sentence said each region asks for regions whose height points its way; in fact the height term
    pulls every region up. Its figures, recomputed here from the weights."""
    regions = picture_regions(6, 8)
    d = ly.self_attention(regions.x, ly.query_weights(10.0))
    pull = upward_pull(regions, d.weights, d.outputs)
    top_share = d.weights[:, :24].sum(-1)  # rows 0-2 are regions 0-23 (reading order, 8 per row)
    assert pull.top_rows == 3 and pull.top_fraction == 0.5
    assert pull.mean_share == pytest.approx(float(top_share.mean()))
    assert pull.bottom_share == pytest.approx(float(top_share[40:].mean()))
    assert pull.mean_share > 0.7 and pull.bottom_share > 0.5  # every row leans up, the bottom one too
    said = upward_sentence(pull)
    assert f"on average {100 * float(top_share.mean()):.0f}% of their weight to the top 3 rows" in said
    assert f"even the bottom row's regions give them {100 * float(top_share[40:].mean()):.0f}%" in said
    blue_out, blue_in = float(d.outputs[:, 2].mean()), float(regions.x[:, 2].mean())
    assert f"{blue_out:.2f})" in said and f"{blue_in:.2f})" in said and "more blue" in said
    # without a query (s = 0) every weight is 1/N: no lean, and the sentence does not claim one
    flat = ly.self_attention(regions.x, ly.query_weights(0.0))
    calm = upward_sentence(upward_pull(regions, flat.weights, flat.outputs))
    assert "does not pull the weights up" in calm and "leans up" not in calm
    assert upward_pull(picture_regions(1, 4), d.weights[:4, :4], d.outputs[:4]) is None


def test_every_figure_of_pictures_says_so_for_the_page_that_cuts_its_empty_bottom():
    """The one-query picture, the queries' pictures and the mosaics carry PICTURES_AT_TOP in their layout's meta, which
    the app's page reads to cut the room left under them on a phone (ui/fit_pictures.py); the text figures do not."""
    png, regions = load_picture(), picture_regions(*parse_grid("6x8"))
    weights = np.full((2, regions.n), 1.0 / regions.n)
    pixels = np.zeros((6, 8, 3), dtype=np.uint8)
    for fig in (fg.picture_with_weights(png, regions, weights[0], "one query"),
                fg.pictures_with_weights(png, regions, weights, ["sun", "sky"]),
                fg.mosaics([("before", pixels), ("after", pixels)])):
        assert fig.layout.meta == PICTURES_AT_TOP


def test_the_weights_written_on_the_picture_have_a_dark_halo():
    """Each region's weight is white on the picture: on the clearest region the picture shows through (step 3 of the
    default lecture: 0.52 on the yellow sun) and white alone could not be read there; a dark halo keeps it legible."""
    png, regions = load_picture(), picture_regions(*parse_grid("6x8"))
    fig = fg.picture_with_weights(png, regions, np.full(regions.n, 1.0 / regions.n), "one query")
    values = next(t for t in fig.data if t.type == "heatmap")
    assert values.texttemplate and values.textfont.color == "white" and "#000" in values.textfont.shadow
