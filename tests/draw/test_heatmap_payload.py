"""The heatmap payload: what the canvas component draws decodes back to the matrices, to the stated precision."""

import json

import numpy as np
import pytest
import torch

from attnviz.draw.head_grid import head_grid_payload
from attnviz.draw.heatmap_payload import BITS, HEADER, SCALE_KINDS, decode_payload, heatmap_payload, precision, tick_text
from attnviz.draw.text import markdown_literal
from attnviz.engine.masks import causal_mask
from attnviz.errors import AttnvizError


def softmax_rows(rng, shape):
    x = rng.normal(size=shape) * 3
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("bytes_per_cell", [1, 2])
def test_weights_round_trip_within_half_a_step(bytes_per_cell):
    w = softmax_rows(np.random.default_rng(0), (12, 7, 7))
    payload = heatmap_payload(list(w), list("abcdefg"), titles=[f"head {h}" for h in range(12)], columns=3,
                              bytes_per_cell=bytes_per_cell)
    meta, drawn = decode_payload(payload)
    assert drawn.shape == (12, 7, 7) and meta["columns"] == 3 and meta["titles"][5] == "head 5"
    assert np.abs(drawn - w).max() <= precision(meta) + 1e-12
    assert precision(meta) == pytest.approx(0.5 / (255 - 1 if bytes_per_cell == 1 else 65535 - 1))
    assert len(payload) < HEADER.size + len(json.dumps(meta)) + 8 + 12 * 49 * bytes_per_cell  # only cells + JSON


def test_uint16_weights_hold_three_decimals_and_the_model_weights(toy):
    res = toy.run("red green blue")
    payload = heatmap_payload(res.attentions[1], res.labels, titles=["head 0", "head 1"])
    meta, drawn = decode_payload(payload)
    assert np.abs(drawn - res.attentions[1].numpy()).max() <= precision(meta) + 1e-7 < 1e-5  # 3 decimals hold
    assert meta["row_labels"] == meta["col_labels"] == res.labels


def test_rectangular_cross_attention_keeps_both_label_lists():
    w = softmax_rows(np.random.default_rng(1), (3, 5))  # target 3 × source 5
    meta, drawn = decode_payload(heatmap_payload(w, ["t0", "t1", "t2"], ["s0", "s1", "s2", "s3", "s4"], titles=["x"]))
    assert (meta["rows"], meta["cols"]) == (3, 5) and meta["col_labels"][-1] == "s4"
    np.testing.assert_allclose(drawn[0], w, atol=precision(meta))


def test_signed_matrix_keeps_minus_infinity_and_its_values():
    s = torch.tensor([[1.5, float("-inf"), -2.0], [0.25, 3.0, float("-inf")]])
    meta, drawn = decode_payload(heatmap_payload(s, ["a", "b"], titles=["S''"], kind="signed"))
    assert np.isneginf(drawn[0, 0, 1]) and np.isneginf(drawn[0, 1, 2])
    finite = np.isfinite(drawn[0])
    np.testing.assert_allclose(drawn[0][finite], s.numpy()[finite], atol=precision(meta))
    assert meta["col_labels"] == ["0", "1", "2"]  # numbered columns for a signed matrix
    assert meta["ranges"] == [[-3.0, 3.0]]  # centred at 0
    assert not np.isnan(drawn).any() and meta["bytes_per_cell"] == 4  # signed: float32, exact


def test_nan_never_reaches_the_payload_and_a_constant_matrix_decodes():
    meta, drawn = decode_payload(heatmap_payload(np.full((2, 2), np.nan), ["a", "b"], titles=["n"], kind="signed"))
    assert not np.isnan(drawn).any()
    for bpc in (2, 4):
        meta, drawn = decode_payload(heatmap_payload(np.full((2, 2), 0.7), ["a", "b"], titles=["c"], kind="signed",
                                                     bytes_per_cell=bpc))
        np.testing.assert_allclose(drawn, 0.7, rtol=1e-6)


def test_signed_as_uint16_holds_half_a_step_of_each_panels_range():
    z = np.random.default_rng(3).normal(size=(2, 4, 6))
    z[0, 1, 1] = -np.inf
    meta, drawn = decode_payload(heatmap_payload(list(z), list("abcd"), titles=["p", "q"], kind="signed", bytes_per_cell=2))
    assert np.isneginf(drawn[0, 1, 1]) and meta["bytes_per_cell"] == 2
    finite = np.isfinite(z)
    assert np.abs(drawn[finite] - z[finite]).max() <= precision(meta) + 1e-12


def test_per_head_scale_gives_each_panel_its_own_colour_range():
    w = np.stack([np.full((2, 2), 0.5), np.array([[0.1, 0.9], [0.2, 0.8]])])
    meta, _ = decode_payload(heatmap_payload(list(w), ["a", "b"], titles=["p", "q"], per_head_scale=True))
    assert meta["ranges"] == [[0.0, 0.5], [0.0, 0.9]]
    meta, _ = decode_payload(heatmap_payload(list(w), ["a", "b"], titles=["p", "q"]))
    assert meta["ranges"] == [[0.0, 1.0], [0.0, 1.0]]


def test_labels_travel_as_typed_text():
    labels = ["<img src=x onerror=alert(1)>", "a&b", "1:cat:", "👩‍👩‍👧"]
    meta, _ = decode_payload(heatmap_payload(np.eye(4), labels, titles=["t"]))
    assert meta["row_labels"] == labels


def test_bad_shapes_and_labels_are_clear_errors():
    with pytest.raises(AttnvizError, match="Labels do not fit"):
        heatmap_payload(np.eye(3), ["a", "b"], titles=["t"])
    with pytest.raises(AttnvizError, match="non-empty"):
        heatmap_payload(np.zeros((0, 0)), [], titles=["t"])
    with pytest.raises(AttnvizError, match="title"):
        heatmap_payload(np.eye(2), ["a", "b"], titles=[])


def test_large_grids_switch_to_one_byte_per_cell():
    payload = heatmap_payload(np.full((12, 512, 512), 1 / 512), [str(i) for i in range(512)], titles=[str(h) for h in range(12)])
    meta, drawn = decode_payload(payload)
    assert meta["bytes_per_cell"] == 1 and len(payload) < 12 * 512 * 512 + 20_000


def test_markdown_literal_shows_shortcodes_and_markup_as_typed():
    out = markdown_literal("1:cat: **b** $x$ :material/home:")
    assert ":cat:" not in out and ":material/home:" not in out and "\\*\\*b\\*\\*" in out and "\\$x\\$" in out
    assert out.replace("\u2060", "").replace("\\", "") == "1:cat: **b** $x$ :material/home:"


def test_a_model_view_mosaic_of_72_thumbnails_round_trips():
    w = softmax_rows(np.random.default_rng(2), (72, 20, 20))  # 6 layers × 12 heads
    payload = heatmap_payload(list(w), [f"t{i}" for i in range(20)], titles=[f"L{p // 12} H{p % 12}" for p in range(72)],
                              columns=12, thumbnails=True)
    meta, drawn = decode_payload(payload)
    assert meta["thumbnails"] and meta["columns"] == 12 and drawn.shape == (72, 20, 20)
    assert np.abs(drawn - w).max() <= precision(meta)


def test_a_highlight_names_one_panel_and_thumbnails_travel_as_uint8():
    w = softmax_rows(np.random.default_rng(3), (4, 6, 6))
    meta, drawn = decode_payload(heatmap_payload(list(w), list("abcdef"), titles=list("pqrs"), thumbnails=True, highlight=3))
    assert meta["highlight"] == 3 and meta["bytes_per_cell"] == 1 and np.abs(drawn - w).max() <= precision(meta)
    assert decode_payload(heatmap_payload(list(w), list("abcdef"), titles=list("pqrs")))[0]["highlight"] is None
    for bad in (4, -1):
        with pytest.raises(AttnvizError, match="panel"):
            heatmap_payload(list(w), list("abcdef"), titles=list("pqrs"), thumbnails=True, highlight=bad)


@pytest.mark.parametrize("n", [300, 7])  # 7 × 7 = 49 cells: the last byte of bits is partly filled
def test_a_mask_matrix_travels_exactly_in_one_bit_per_cell(n):
    m = np.where(causal_mask(n).numpy(), 0.0, -np.inf)  # M: 0 where allowed, −∞ where forbidden
    payload = heatmap_payload(m, [str(i) for i in range(n)], titles=["M"], kind="signed")
    meta, drawn = decode_payload(payload)
    assert meta["bytes_per_cell"] == BITS and len(payload) < n * n / 8 + 1 + 20_000
    np.testing.assert_array_equal(drawn[0], m)  # exact: 0 stays 0, −∞ stays −∞
    assert precision(meta) == 0.0
    other = heatmap_payload(np.array([[0.0, -1.5], [2.0, -np.inf]]), ["a", "b"], titles=["S"], kind="signed")
    assert decode_payload(other)[0]["bytes_per_cell"] == 4  # several finite values: float32, exact


def test_bits_hold_one_finite_value_per_panel_and_refuse_weights():
    """Two panels of one value each (3 and −2) with −∞ cells: each panel's value comes back, exactly."""
    z = np.array([[[3.0, -np.inf], [3.0, 3.0]], [[-np.inf, -2.0], [-np.inf, -np.inf]]])
    meta, drawn = decode_payload(heatmap_payload(list(z), ["a", "b"], titles=["p", "q"], kind="signed",
                                                 bytes_per_cell=BITS))
    np.testing.assert_array_equal(drawn, z)
    with pytest.raises(AttnvizError, match="uint8 or uint16"):
        heatmap_payload(np.eye(2), ["a", "b"], titles=["w"], bytes_per_cell=BITS)
    with pytest.raises(AttnvizError, match="one finite value"):  # 0 and 1 in one panel: a bit cannot tell them
        heatmap_payload(np.eye(2), ["a", "b"], titles=["s"], kind="signed", bytes_per_cell=BITS)


# ---- kinds of scale: each payload says its kind, colour range and legend words ----------------------------------


def test_every_kind_has_its_header_range_and_legend():
    labels = ["a", "b"]
    w = heatmap_payload(np.array([[0.25, 0.75], [1.0, 0.0]]), labels, titles=["A"])
    s = heatmap_payload(np.array([[1.5, -np.inf], [-3.0, 0.5]]), labels, titles=["S″"], kind="signed")
    g = heatmap_payload(np.array([[0.0, 0.5], [2.0, 1.0]]), labels, titles=["|Δ|"], kind="magnitude")
    m = heatmap_payload(np.array([[0.0, -np.inf], [0.0, 0.0]]), labels, titles=["M"], kind="mask")
    expected = {  # kind: (bytes per cell in the header, colour ranges, ticks under the bar, swatches, title)
        "weights": (2, [[0.0, 1.0]], ["0", "0.5", "1"], [], "weight after softmax"),
        "signed": (4, [[-3.0, 3.0]], ["−3", "0", "3"], [["masked", "−∞ (masked)"]], "value (blue < 0 < red)"),
        "magnitude": (2, [[0.0, 2.0]], ["0", "1", "2"], [], "value ≥ 0 (white = 0)"),
        "mask": (BITS, [[0.0, 0.0]], [], [["may_attend", "0 (may attend)"], ["masked", "−∞ (masked)"]],
                 "M, added to the scores before softmax"),
    }
    assert set(expected) == set(SCALE_KINDS)
    for payload, kind in ((w, "weights"), (s, "signed"), (g, "magnitude"), (m, "mask")):
        meta, _ = decode_payload(payload)
        bpc, ranges, ticks, swatches, title = expected[kind]
        assert HEADER.unpack_from(payload)[2] == meta["bytes_per_cell"] == bpc, kind
        assert meta["kind"] == kind and meta["ranges"] == ranges, kind
        assert meta["legend"] == {"ticks": ticks, "swatches": swatches, "title": title}, kind


def test_signed_names_minus_infinity_only_where_there_is_some():
    meta, _ = decode_payload(heatmap_payload(np.array([[1.0, -2.0]]), ["a"], titles=["S"], kind="signed"))
    assert meta["legend"]["swatches"] == []


def test_a_magnitude_round_trips_from_zero_to_its_largest_value():
    rng = np.random.default_rng(5)
    z = np.abs(rng.normal(size=(3, 4, 5)))
    meta, drawn = decode_payload(heatmap_payload(list(z), list("abcd"), titles=list("pqr"), kind="magnitude"))
    assert meta["bytes_per_cell"] == 2 and np.abs(drawn - z).max() <= precision(meta) + 1e-12
    assert meta["ranges"] == [[0.0, float(z.max())]] * 3 and meta["col_labels"] == ["0", "1", "2", "3", "4"]
    per_panel, _ = decode_payload(heatmap_payload(list(z), list("abcd"), titles=list("pqr"), kind="magnitude",
                                                  per_head_scale=True))
    assert per_panel["ranges"] == [[0.0, float(p.max())] for p in z] and per_panel["legend"]["ticks"] == ["0", "½ max", "max"]
    fixed, _ = decode_payload(heatmap_payload(z[0], list("abcd"), titles=["p"], kind="magnitude", limit=4.0))
    assert fixed["ranges"] == [[0.0, 4.0]] and fixed["legend"]["ticks"] == ["0", "2", "4"]
    zeros, _ = decode_payload(heatmap_payload(np.zeros((2, 2)), ["a", "b"], titles=["0"], kind="magnitude"))
    assert zeros["ranges"] == [[0.0, 1.0]]  # nothing above 0: a scale still, not 0..0


def test_a_magnitude_with_a_negative_value_is_a_clear_error():
    z = np.array([[0.5, 1.0], [-0.25, 2.0]])
    with pytest.raises(AttnvizError, match=r"never negative.*row 1, column 0 holds -0\.25.*kind=.signed."):
        heatmap_payload(z, ["a", "b"], titles=["not |x|"], kind="magnitude")
    with pytest.raises(AttnvizError, match="never negative"):
        heatmap_payload(np.array([[0.0, -np.inf]]), ["a"], titles=["M"], kind="magnitude")


@pytest.mark.parametrize("limit", [None, 1.0])  # the Masks lab passes limit=1.0 with its M
def test_a_mask_is_two_colours_with_minus_infinity_named_and_never_a_bar(limit):
    allowed = causal_mask(5)  # bool, True = may attend
    m = np.where(allowed.numpy(), 0.0, -np.inf)
    labels = list("vwxyz")
    for given in (m, allowed, torch.from_numpy(m), [m, m]):
        meta, drawn = decode_payload(heatmap_payload(given, labels, titles=["M"] * (2 if isinstance(given, list) else 1),
                                                     kind="mask", limit=limit))
        np.testing.assert_array_equal(drawn[0], m)  # exact: True -> 0, False -> −∞
        assert meta["bytes_per_cell"] == BITS and meta["col_labels"] == labels  # query × key
        assert meta["legend"]["ticks"] == [] and all(r == [0.0, 0.0] for r in meta["ranges"])  # no −1..1 bar
        assert [text for _, text in meta["legend"]["swatches"]] == ["0 (may attend)", "−∞ (masked)"]


def test_a_mask_holds_only_zero_and_minus_infinity_and_travels_as_bits():
    with pytest.raises(AttnvizError, match=r"only 0 \(may attend\) and −∞.*0\.5"):
        heatmap_payload(np.array([[0.0, 0.5]]), ["a"], titles=["M"], kind="mask")
    with pytest.raises(AttnvizError, match="one bit"):
        heatmap_payload(np.zeros((2, 2)), ["a", "b"], titles=["M"], kind="mask", bytes_per_cell=2)
    with pytest.raises(AttnvizError, match="kind must be one of .*magnitude.*mask"):
        heatmap_payload(np.zeros((2, 2)), ["a", "b"], titles=["M"], kind="diverging")


def test_legend_ticks_read_as_numbers():
    assert [tick_text(v) for v in (0.5, 1.0, -2.3749, 1234.0, 0.00012345, 0.0)] == ["0.5", "1", "−2.37", "1230", "0.000123", "0"]


def test_a_value_name_replaces_the_legend_title_and_the_hover_word():
    z = np.array([[0.25, 0.75], [1.0, 0.0]])
    meta, _ = decode_payload(heatmap_payload(z, ["a", "b"], titles=["r"], value_name=("rollout share", "rollout")))
    assert meta["legend"]["title"] == "rollout share" and meta["legend"]["hover"] == "rollout"
    assert meta["legend"]["ticks"] == ["0", "0.5", "1"]  # the scale stays the weights' 0..1


def test_a_head_grid_names_each_panels_layer_and_head_for_a_screen_reader(toy):
    """What the browser reads out with each cell (attnviz/components/heatmap/access.js): the layer and the head the
    grid was made for, not guessed from a title that names only the head."""
    weights = toy.run("red green blue").attentions[1]  # (heads, n, n)
    meta, _ = decode_payload(head_grid_payload(weights, ["a", "b", "c", "d", "e"][:weights.shape[-1]], [1, 0], layer=1,
                                               name="grid"))
    assert meta["titles"][0].startswith("head 1 ·") and meta["panel_names"] == ["layer 1, head 1", "layer 1, head 0"]
    assert meta["label"] == "layer 1: 2 heads, weights after softmax"
    plain, _ = decode_payload(heatmap_payload(np.eye(2), ["a", "b"], titles=["x"]))
    assert "panel_names" not in plain and "label" not in plain  # the browser then reads the title
    with pytest.raises(AttnvizError, match="2 panel\\(s\\) but 1 panel name"):
        heatmap_payload(np.ones((2, 2, 2)) / 2, ["a", "b"], titles=["x", "y"], panel_names=["layer 0, head 0"])
