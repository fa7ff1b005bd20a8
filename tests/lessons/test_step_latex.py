"""attnviz.lessons.step_by_step.latex: the numbers in the LaTeX are the numbers the model computed."""

import math
import re

import pytest
import torch

from attnviz.lessons.step_by_step.latex import (
    dot_product_latex,
    mask_entry_latex,
    scaled_latex,
    softmax_latex,
    step_cards,
    tex_text,
    top_terms,
    vector_latex,
)

NUMBER = r"(-?\d+(?:\.\d+)?)(?:\\times10\^\{(-?\d+)\})?"


def last_number(latex: str) -> float:
    """The final number of a LaTeX string, as attnviz.draw.latex.fmt writes numbers (1.5, -0.25, 2.1\\times10^{-7})."""
    mantissa, exponent = re.findall(NUMBER, latex)[-1]
    return float(mantissa) * 10 ** int(exponent or 0)


def underbraced_terms(latex: str) -> list[int]:
    return [int(m) for m in re.findall(r"\}_\{m=(\d+)\}", latex)]


def test_every_term_is_written_and_the_total_is_q_dot_k():
    q, k = torch.tensor([0.5, -1.25, 2.0, 0.75]), torch.tensor([1.5, 0.5, -0.25, 2.0])
    latex = dot_product_latex(3, 1, q, k, float(q @ k))
    assert underbraced_terms(latex) == [0, 1, 2, 3]
    assert r"0.5\cdot1.5" in latex and r"(-1.25)\cdot0.5" in latex  # negatives in parentheses
    assert last_number(latex) == pytest.approx(float(q @ k), abs=1e-4)  # 0.75 - 0.625 - 0.5 + 1.5 = 1.125
    assert r"\sum_{m=0}^{3} q_{3,m}\, k_{1,m}" in latex


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_total_matches_torch_for_random_real_sized_vectors(seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(32, generator=g), torch.randn(32, generator=g)
    latex = dot_product_latex(0, 5, q, k, float(q @ k), top=6)
    assert last_number(latex) == pytest.approx(float(q @ k), abs=1e-4)


def test_top_k_names_the_largest_products_and_sums_the_rest():
    q = torch.ones(32)
    k = torch.full((32,), 0.01)
    k[[7, 19, 3, 25, 30, 11]] = torch.tensor([-9.0, 8.0, 7.0, -6.0, 5.0, 4.0])  # the six largest |q_m k_m|, in order
    latex = dot_product_latex(2, 4, q, k, float(q @ k), top=6)
    assert underbraced_terms(latex) == [7, 19, 3, 25, 30, 11] == top_terms(q * k, 6)
    assert r"26\text{ more terms}\, =\, 0.26" in latex  # 26 × 0.01
    assert last_number(latex) == pytest.approx(float(q @ k), abs=1e-4)


def test_scaled_value_divides_by_root_d_k_or_keeps_the_dot_product_when_off():
    assert last_number(scaled_latex(1, 2, 3.0, 0.5, 4)) == 1.5
    assert r"\sqrt{4}" in scaled_latex(1, 2, 3.0, 0.5, 4)
    assert last_number(scaled_latex(1, 2, 3.0, 1.0, 4)) == 3.0
    assert r"\text{(scaling off)}" in scaled_latex(1, 2, 3.0, 1.0, 4)
    assert last_number(scaled_latex(1, 2, -3.0, 0.25, 4)) == -0.75


def test_masked_entries_render_as_minus_infinity():
    assert mask_entry_latex(0, 3, False, 1.25).endswith(r"= -\infty")
    assert r"M_{0,3} = -\infty" in mask_entry_latex(0, 3, False, 1.25)
    allowed = mask_entry_latex(3, 0, True, 1.25)
    assert r"M_{3,0} = 0" in allowed and last_number(allowed) == 1.25


def test_softmax_shows_the_row_and_its_weight():
    row = torch.tensor([0.5, 1.0, float("-inf"), -0.5])
    weights = torch.softmax(row, dim=0)
    latex = softmax_latex(1, 1, row, float(weights[1]))
    assert r"e^{-\infty}" in latex and "nan" not in latex.lower()
    numerator, denominator = (float(x) for x in re.findall(r"\\frac\{(\d+\.\d+)\}\{(\d+\.\d+)\}", latex)[0])
    assert numerator == pytest.approx(math.e, abs=1e-3)
    assert numerator / denominator == pytest.approx(float(weights[1]), abs=1e-3)
    assert last_number(latex) == pytest.approx(float(weights[1]), abs=1e-4)
    masked = softmax_latex(1, 2, row, 0.0)
    assert masked.startswith(r"\begin{aligned}") and last_number(masked) == 0.0


def test_softmax_of_huge_scores_subtracts_the_max_and_stays_finite():
    row = torch.tensor([400.0, 380.0, 399.0])
    latex = softmax_latex(0, 2, row, float(torch.softmax(row, 0)[2]))
    assert r"m = \max_l S''_{0,l} = 400" in latex and "inf" not in latex.replace(r"\infty", "")
    assert last_number(latex) == pytest.approx(float(torch.softmax(row, 0)[2]), abs=1e-4)


def test_fully_masked_row_gives_zero_never_nan():
    latex = softmax_latex(0, 0, torch.full((3,), float("-inf")), 0.0)
    assert "nan" not in latex.lower() and r"= 0 \quad" in latex


def test_step_cards_label_every_shape():
    cards = step_cards(n=9, d_model=384, d_head=32, n_heads=12, head=5, scale=32**-0.5, masked=True, pre_ln=False)
    assert [c.key for c in cards] == ["x", "qkv", "scores", "scaled", "masked", "weights", "head", "concat", "out"]
    shapes = {c.key: c.shape for c in cards}
    assert shapes["qkv"] == r"(n \times d_{head}) = (9 \times 32)"
    assert shapes["scores"].endswith(r"(9 \times 9)") and shapes["out"].endswith(r"(9 \times 384)")
    assert r"W_Q^{(5)}" in cards[1].latex and r"-\infty" in cards[4].latex
    assert r"\sqrt{32}" in cards[3].latex
    off = step_cards(9, 8, 4, 2, 0, 1.0, False, True)
    assert off[3].title == "no scaling" and r"M = 0" in off[4].latex and r"\mathrm{LN}" in off[0].latex


def test_tokens_and_vectors_are_safe_latex():
    assert tex_text("##ing_{x}") == r"\text{\#\#ing\_\{x\}}"
    short = vector_latex("q_{0}", torch.tensor([1.0, -2.5]))
    assert short == r"q_{0} = \left(1, -2.5\right)"
    assert r"\dots\ (\text{32 numbers})" in vector_latex("q_{0}", torch.zeros(32))


def test_the_concat_card_names_the_heads_columns_and_claims_no_frame():
    """Nothing frames a head's columns in the Concat heatmap: the card says which columns they are instead."""
    concat = next(c for c in step_cards(9, 384, 32, 12, 5, 32**-0.5, True, False) if c.key == "concat")
    assert "framed" not in concat.text and "head 5's are columns 160–191" in concat.text


def test_a_seeded_models_projections_are_not_called_learned():
    """The toy's weights are drawn from a seed: its cards said "Three learned projections"."""
    seeded = {c.key: c.text for c in step_cards(9, 8, 4, 2, 0, 0.5, False, False, trained=False)}
    assert seeded["qkv"].startswith("Three seeded (drawn at random, not trained) projections")
    assert "learned" not in seeded["qkv"] + seeded["out"]
    trained = {c.key: c.text for c in step_cards(9, 8, 4, 2, 0, 0.5, False, False)}
    assert trained["qkv"].startswith("Three learned projections")
