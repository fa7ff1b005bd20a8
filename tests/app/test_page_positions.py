"""The positions page in AppTest: every number and matrix on screen equals attnviz's own."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import json
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_grid, drawn_heatmap, page_text, run_app

import attnviz
from attnviz.draw.plotting import decode_plotly_array
from attnviz.engine.rope_types import rope_inverse_frequencies, rope_parameters
from attnviz.lessons.positions import encodings as enc
from attnviz.lessons.positions import rope_demo as rd
from attnviz.lessons.positions.permutation import permutation_demo

PAGE = "app_pages/positions.py"
TEXT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def default_page():
    return run_app({"text": TEXT}, page=PAGE)


@pytest.fixture(scope="module")
def toy_nopos():
    return attnviz.load_model("toy", positions=False)


def metrics(at) -> list[tuple[str, str]]:
    return [(m.label, m.value) for m in at.metric]


def test_permutation_numbers_are_attnvizs(default_page, minilm, toy_nopos):
    at = default_page
    assert_healthy(at)
    with_pos, without = permutation_demo(minilm, TEXT, 0), permutation_demo(toy_nopos, TEXT, 0)
    shown = metrics(at)
    # each maximum says what it covers: the map's own beside the map, the whole model's named as such (one label,
    # "max |Δ| attention weights", read 0.498 beside a map whose largest difference was 0.19)
    assert shown[:6] == [
        ("max |Δ| weights, this map (L0 H0)", f"{float(with_pos.head_difference(0, 0).abs().max()):.3g}"),
        ("max |Δ| weights, all 6 layers × 12 heads", f"{with_pos.attention_difference:.3g}"),
        ("max |Δ| outputs, last layer", f"{with_pos.output_difference:.3g}"),
        ("max |Δ| weights, this map (L0 H0)", f"{float(without.head_difference(0, 0).abs().max()):.3g}"),
        ("max |Δ| weights, all 2 layers × 2 heads", f"{without.attention_difference:.3g}"),
        ("max |Δ| outputs, last layer", f"{without.output_difference:.3g}"),
    ]
    assert shown[0][1] != shown[1][1]  # on this text the model's largest change is not in the map shown
    assert without.attention_difference < 1e-5 < 1e-2 < with_pos.attention_difference
    z, rows, cols = drawn_heatmap(at, "pos_perm_diff_0")
    np.testing.assert_allclose(z, (with_pos.attentions[0, 0] - with_pos.attentions_back[0, 0]).numpy(), atol=1e-6)
    assert rows == cols == with_pos.tokens
    z, _, _ = drawn_heatmap(at, "pos_perm_a_1")
    np.testing.assert_allclose(z, without.attentions[0, 0].numpy(), atol=0.0005 + 1e-7)
    assert "Shuffled order: " + " ".join(with_pos.shuffled_tokens) in page_text(at)


def test_sinusoidal_and_learned_tables_are_attnvizs(default_page, minilm):
    at = default_page
    pe = enc.sinusoidal_table(32, 64)
    z, rows, _ = drawn_heatmap(at, "pos_sin_table")
    np.testing.assert_allclose(z, pe.numpy(), atol=1e-6)
    assert rows[0] == "pos 0" and rows[-1] == "pos 31"
    gram = enc.position_dot_products(pe)
    np.testing.assert_allclose(drawn_heatmap(at, "pos_sin_gram")[0], gram.numpy(), rtol=1e-6, atol=1e-5)
    prof = enc.distance_profile(gram)
    assert enc.profile_sentence(prof, "Sinusoidal") in page_text(at)
    learned = enc.learned_table(minilm, 32)
    np.testing.assert_allclose(drawn_heatmap(at, "pos_learned_table")[0], learned.numpy(), atol=1e-7)
    lgram = enc.position_dot_products(learned)
    np.testing.assert_allclose(drawn_heatmap(at, "pos_learned_gram")[0], lgram.numpy(), atol=1e-6)
    profile = chart_specs(at)["pos_learned_profile"]["data"][1]  # the mean line, from Δ = 1
    lprof = enc.distance_profile(lgram)

    np.testing.assert_allclose(decode_plotly_array(profile["y"]), lprof.mean[1:].numpy(), rtol=1e-6)


def test_rope_numbers_are_attnvizs(default_page):
    at = default_page
    q, k = rd.seeded_query_key(32, 0)
    table = rd.rope_score_table(q, k, 10)
    z, rows, cols = drawn_heatmap(at, "pos_rope_table")
    np.testing.assert_allclose(z, table.numpy(), atol=1e-5)
    assert rows[3] == "q@3" and cols[1] == "k@1"
    shown = dict(metrics(at)[4:])
    assert shown["max |s(i,j) − s(i+5,j+5)|"] == f"{rd.shift_difference(q, k, 10, 5):.2e}"
    assert shown["RoPE: diagonal spread"] == f"{rd.diagonal_spread(table):.2e}"
    added = rd.added_positions_score_table(q, k, 10)
    assert shown["sinusoids added: spread"] == f"{rd.diagonal_spread(added):.3g}"
    assert "has no RoPE" in page_text(at) and "θ = 10000 with its d_head = 32" in page_text(at)


def test_the_toy_without_positions_is_offered_in_the_sidebar(toy_nopos, toy):
    at = run_app({"text": TEXT, "model": "toy-nopos"}, page=PAGE)
    assert_healthy(at)
    assert at.selectbox(key="model").value == "toy-nopos"
    names = [s.value for s in at.subheader]
    assert names[:2] == ["toy (no positions)", "toy"]
    first, second = permutation_demo(toy_nopos, TEXT, 0), permutation_demo(toy, TEXT, 0)
    assert metrics(at)[1] == ("max |Δ| weights, all 2 layers × 2 heads", f"{first.attention_difference:.3g}")
    assert metrics(at)[4] == ("max |Δ| weights, all 2 layers × 2 heads", f"{second.attention_difference:.3g}")
    assert "d_head = 4" in page_text(at)  # RoPE part uses the toy's head size


def test_sliders_change_what_is_drawn(minilm):
    at = run_app({"text": TEXT}, page=PAGE)
    at.slider(key="pos_d").set_value(16)
    at.slider(key="pos_n").set_value(12)
    at.checkbox(key="pos_skip0").check()
    at.run()
    assert_healthy(at)
    np.testing.assert_allclose(drawn_heatmap(at, "pos_sin_table")[0], enc.sinusoidal_table(12, 16).numpy(), atol=1e-6)
    z, rows, _ = drawn_heatmap(at, "pos_learned_table")
    np.testing.assert_allclose(z, enc.learned_table(minilm, 12, first=1).numpy(), atol=1e-7)
    assert rows[0] == "pos 1"


@pytest.mark.parametrize(("text", "message"), [("hello", "at least two words"), ("", "Type some text")])
def test_a_text_that_cannot_be_shuffled_gets_a_message_and_the_rest_still_draws(text, message):
    at = run_app({"text": "placeholder words"}, page=PAGE)
    at.text_area(key="text").input(text).run()
    assert_healthy(at)
    assert any(message in e.value for e in at.error)
    assert "pos_sin_table" in chart_specs(at) and "pos_rope_table" in chart_specs(at)


def test_toy_nopos_is_a_model_for_every_page(toy_nopos, toy):
    """The sidebar's toy-nopos loads the toy without positions (same seeded weights), e.g. in the explorer."""
    at = run_app({"text": TEXT, "model": "toy-nopos"})
    assert_healthy(at)
    drawn = {title.split(" · ")[0]: panel for title, panel in drawn_grid(at, "grid").items()}  # the explorer's grid
    nopos, with_pos = toy_nopos.run(TEXT).attentions, toy.run(TEXT).attentions
    z, _, _ = drawn["head 0"]
    np.testing.assert_allclose(z, nopos[0, 0].numpy(), atol=0.0005 + 1e-7)
    assert not np.allclose(z, with_pos[0, 0].numpy(), atol=0.01)


@pytest.mark.parametrize("name", ["llama", "llama3-tied"])
def test_a_llama_folder_rotates_with_its_own_frequencies_and_its_trace_agrees(tiny_decoder_folder, name):
    folder = tiny_decoder_folder(name)
    text = "the cat sat on the mat"
    at = run_app({"model": "other", "model_path": str(folder), "text": text, "pos_pair": "1"}, page=PAGE)
    assert_healthy(at)
    assert not at.error
    model = attnviz.load_model(str(folder))
    own = rope_inverse_frequencies(rope_parameters(json.loads((Path(folder) / "config.json").read_text())), model.d_head)
    assert any(f"{model.name}'s own RoPE" in s.value for s in at.success)
    q, k = rd.seeded_query_key(model.d_head, 0)
    z, _, _ = drawn_heatmap(at, "pos_rope_table")
    np.testing.assert_allclose(z, rd.rope_score_table(q, k, 10, own).numpy(), atol=1e-5)
    rot = rd.model_rotation(model.run(text, keep=True), own)
    shown = dict(metrics(at))
    gap = next(v for label, v in shown.items() if label.startswith("max |R(t)·q"))
    assert gap == f"{rot.gap:.2e}" and float(gap) < 1e-5
    table = next(d.value for d in at.dataframe if "angle t·θ_p (rad)" in d.value.columns)
    np.testing.assert_allclose(table["angle t·θ_p (rad)"], [round(t * float(own[1]), 4) for t in range(len(table))])
    after = rot.q_after[0, 0, 2]
    assert table["q pair after (model)"][2] == f"({float(after[1]):.3f}, {float(after[1 + model.d_head // 2]):.3f})"


def test_the_positions_slider_and_the_text_name_the_same_positions(default_page):
    """The slider counts positions (T = 8 by default) and the text lists those same ones, 0 … 7."""
    slider = default_page.slider(key="pos_steps")
    assert slider.label == "Positions shown, T (0 … T − 1)" and slider.value == 8
    assert "placed at the T = 8 positions 0 … 7." in page_text(default_page)
    track = chart_specs(default_page)["pos_pair_track"]["data"]
    assert track[1]["text"] == [str(t) for t in range(8)]  # the points drawn: positions 0 … 7
