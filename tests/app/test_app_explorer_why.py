"""The explorer's 'why this weight' in AppTest: a click (written into the component's state, as the browser
would) or a link selects a cell, and the arithmetic shown is attnviz's own (pair_detail)."""

import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_grid, heatmap_payloads, page_text, run_app

from attnviz.draw.heatmap_payload import decode_payload
from attnviz.draw.latex import fmt
from attnviz.lessons.explorer.selection import Selection
from attnviz.lessons.step_by_step.steps import head_steps, pair_detail

TEXT = "red green blue yellow"


def plain(x: float) -> str:
    return "−∞" if x == float("-inf") else f"{x:.4f}".replace("-", "−")


def in_short(at) -> list[str]:
    line = next(str(m.value) for m in at.markdown if str(m.value).startswith("In short"))
    return re.findall(r"(−?\d+\.\d+|−∞)", line)


def click(at, panel: int, row: int, col: int, key: str = "grid"):
    at.session_state[key] = {"selection": {"panel": panel, "row": row, "col": col}}
    return at.run()


def test_grid_payload_decodes_to_attnviz_weights_for_a_layer_and_heads(minilm):
    at = run_app({"text": "The cat sat on the mat.", "layer": "2", "heads": ["3", "7"]})
    assert_healthy(at)
    res = minilm.run("The cat sat on the mat.")
    drawn = drawn_grid(at, "grid")
    assert [t.split(" · ")[0] for t in drawn] == ["head 3", "head 7"]
    for (z, rows, cols), h in zip(drawn.values(), [3, 7], strict=True):
        assert rows == cols == res.labels
        np.testing.assert_allclose(z, res.attentions[2, h].numpy(), atol=1e-5)


def test_a_click_on_the_grid_shows_why_that_weight_as_pair_detail_computes_it(toy):
    at = run_app({"model": "toy", "text": TEXT, "layer": "1"})
    assert "Click a cell" in page_text(at)
    at = click(at, panel=1, row=3, col=2)
    assert_healthy(at)
    pair = pair_detail(head_steps(toy, toy.run(TEXT, keep=True), 1, 1), 3, 2)
    assert in_short(at) == [plain(pair.dot), plain(pair.scaled), plain(pair.scaled), plain(pair.weight)]
    latex = "\n".join(e.value for e in at.latex)
    assert fmt(pair.dot, 4) in latex and fmt(pair.weight, 4) in latex
    assert all(r"\underbrace{" in latex and f"m={m}" in latex for m in range(4))  # every term on the toy (d_head 4)
    assert at.query_params["sbs_head"] == "1" and at.query_params["sbs_query"] == "3: blue"  # Step by step's format
    meta, row = decode_payload(heatmap_payloads(at)["why_row"])
    assert meta["selection"] == {"panel": 0, "row": 0, "col": 2}  # this weight ringed in its row
    np.testing.assert_allclose(row[0, 0], pair.row.softmax(-1).numpy(), atol=1e-5)


def test_real_model_writes_the_largest_terms_and_the_rest(minilm):
    at = run_app({"text": "The cat sat on the mat."})
    at = click(at, panel=4, row=5, col=2)
    assert_healthy(at)
    latex = "\n".join(e.value for e in at.latex)
    assert "26" in latex and "more terms" in latex  # d_head 32: 6 largest written, 26 summed
    pair = pair_detail(head_steps(minilm, minilm.run("The cat sat on the mat.", keep=True), 0, 4), 5, 2)
    assert in_short(at)[-1] == plain(pair.weight)


def test_a_link_restores_the_selection_and_its_ring(toy):
    at = run_app({"model": "toy", "text": TEXT, "sbs_head": "0", "sbs_query": "2: green", "sbs_key": "4"})
    assert_healthy(at)
    pair = pair_detail(head_steps(toy, toy.run(TEXT, keep=True), 0, 0), 2, 4)
    assert in_short(at)[-1] == plain(pair.weight)
    assert decode_payload(heatmap_payloads(at)["grid"])[0]["selection"] == {"panel": 0, "row": 2, "col": 4}


def test_a_forbidden_cell_is_minus_infinity_then_zero(toy):
    at = run_app({"model": "toy", "text": TEXT, "mask": "causal"})
    at = click(at, panel=0, row=1, col=4)
    assert_healthy(at)
    assert in_short(at)[2:] == ["−∞", plain(0.0)]
    assert "The mask forbids this pair" in page_text(at)
    assert r"-\infty" in "\n".join(e.value for e in at.latex)


def test_a_selection_after_a_shorter_text_keeps_its_tokens(toy):
    at = run_app({"model": "toy", "text": TEXT})
    at = click(at, panel=1, row=5, col=5)  # [SEP] → [SEP] of 6 tokens
    at.text_area(key="text").input("red").run()  # 3 tokens now: [SEP] is token 2 (kept by token, not position)
    assert_healthy(at)
    assert "outside this text" not in page_text(at)
    assert at.session_state["why_sel"] == Selection(1, 2, 2)
    pair = pair_detail(head_steps(toy, toy.run("red", keep=True), 0, 1), 2, 2)
    assert in_short(at)[-1] == plain(pair.weight)


def test_a_click_outside_the_grid_or_garbage_state_selects_nothing():
    at = run_app({"model": "toy", "text": TEXT})
    for bad in ({"panel": 9, "row": 0, "col": 0}, {"panel": 0, "row": 99, "col": 0}, {"panel": "x"}, {}, None):
        at.session_state["grid"] = {"selection": bad}
        at.run()
        assert_healthy(at)
        assert "Click a cell" in page_text(at)


def test_a_huge_link_selection_is_clamped_not_a_traceback():
    at = run_app({"model": "toy", "text": TEXT, "sbs_head": "99", "sbs_query": "100000", "sbs_key": "-3"})
    assert_healthy(at)
    assert "negative position" in page_text(at) and "Click a cell" in page_text(at)


def test_per_head_colours_give_each_head_its_own_range_and_keep_the_numbers(toy):
    at = run_app({"model": "toy", "text": TEXT})
    at.toggle(key="per_head").set_value(True).run()
    assert_healthy(at)
    meta, drawn = decode_payload(heatmap_payloads(at)["grid"])
    res = toy.run(TEXT)
    assert meta["ranges"] == [[0.0, pytest.approx(float(res.attentions[0, h].max()), abs=1e-6)] for h in range(2)]
    np.testing.assert_allclose(drawn, res.attentions[0].numpy(), atol=1e-5)  # colours change, values do not
