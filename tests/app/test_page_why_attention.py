"""The Why attention page in AppTest: the accuracy bars, both answers and the alignment are the shipped models'."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, chart_specs, drawn_heatmap, heatmap_payloads, page_text, run_app

from attnviz.draw.heatmap_payload import decode_payload
from attnviz.draw.plotting import decode_plotly_array
from attnviz.lessons.why_attention import bottleneck as lesson

PAGE = "app_pages/why_attention.py"
WEIGHT_TOL = 0.0005 + 1e-7  # weights are drawn in thousandths
LONG = "six hundred four million two hundred eighteen thousand three hundred seventy seven, seventy one thousand three"


@pytest.fixture(scope="module")
def page():
    return run_app({"wa_text": LONG}, page=PAGE)


def answer(at, who: str) -> tuple[str, str]:
    """(digits, verdict) from the answers table's row for `who`."""
    for line in page_text(at).splitlines():
        if line.startswith(f"| {who} |"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            return cells[1].strip("`"), cells[2]
    raise AssertionError(f"no row for {who}")


def test_the_bars_are_the_measured_exact_match(page):
    assert_healthy(page)
    curve = lesson.accuracy_against_length()
    bars = [t for t in chart_specs(page)["wa_accuracy"]["data"] if t["type"] == "bar"]
    drawn = {t["name"]: decode_plotly_array(t["y"]) for t in bars}
    np.testing.assert_allclose(drawn["one fixed-size vector"], 100 * np.array(curve.bottleneck), atol=1e-9)
    np.testing.assert_allclose(drawn["additive attention"], 100 * np.array(curve.attention), atol=1e-9)
    text = page_text(page)
    for line in lesson.sentences(curve):
        assert line in text


def test_the_answers_and_the_alignment_are_the_models(page):
    al = lesson.alignment(LONG)
    assert answer(page, "the right answer")[0] == al.expected == "604218377, 71003"
    assert answer(page, "additive attention wrote") == (al.attention_answer, "✓ right")
    assert answer(page, "one fixed-size vector wrote") == (
        al.bottleneck_answer, "✓ right" if al.bottleneck_answer == al.expected else "✗ wrong")
    weights, rows, cols = drawn_heatmap(page, "wa_alignment")
    assert rows == al.output_labels and cols == al.source_labels
    np.testing.assert_allclose(weights, al.weights.numpy(), atol=WEIGHT_TOL)
    j = int(al.weights[0].argmax())
    assert f"{al.output_labels[0]} ← {al.source_labels[j]} ({float(al.weights[0, j]):.2f})" in page_text(page)


def test_an_example_fills_the_box_and_rings_its_length(page):
    at = page
    at.segmented_control(key="wa_example").set_value("short").run()
    assert_healthy(at)
    assert at.text_input(key="wa_text").value == "forty two"
    assert answer(at, "the right answer")[0] == "42"
    layout = chart_specs(at)["wa_accuracy"]["layout"]
    rings = layout["shapes"]
    assert len(rings) == 1 and (rings[0]["x0"], rings[0]["x1"]) == (-0.5, 0.5)  # "forty two": 2 words, bin 1–8
    assert layout["xaxis"]["ticktext"][0] == "<b>1–8: your sentence</b>"
    # plotly does not wrap an axis title: at 1024 px (a projector) the chart's column holds about 45 characters of
    # it, and the title was cut to "(2,000 held-out sentenc"
    lines = layout["xaxis"]["title"]["text"].split("<br>")
    assert max(map(len, lines)) <= 40 and "held-out sentences)" in lines[-1], lines


@pytest.mark.parametrize("text, message", [
    ("", "Type a number in words"),
    ("three hundred apples", "does not know 'apples'"),
    ("nine, " * 50, "longer than"),
])
def test_bad_input_is_a_clear_message_and_the_chart_stays(text, message):
    at = run_app({"wa_text": text}, page=PAGE)
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert "wa_accuracy" in chart_specs(at)
    assert "From here to the Transformer" in [h.value for h in at.header]


def test_a_sentence_the_task_does_not_write_gets_no_verdict():
    at = run_app({"wa_text": "twelve hundred"}, page=PAGE)
    assert_healthy(at)
    assert answer(at, "the right answer")[0] == "—"
    assert answer(at, "additive attention wrote")[1] == "no verdict"
    assert "no right answer to compare with" in page_text(at)


def test_the_pages_sentences_say_what_rows_and_annotations_are(page):
    """"one row per digit" also counted commas; "a query, keys and values" did not say that the annotations h_j
    are both the keys and the values."""
    text = page_text(page)
    title = decode_payload(heatmap_payloads(page)["wa_alignment"])[0]["titles"][0]
    assert title == "α_ij: the attention model's weights, one row per digit or comma it wrote"
    assert "one row per digit it wrote" not in text
    assert "the annotations $h_j$ are both the keys (they are scored) and the values (they are averaged)" in text
    assert "$S$ of them" in text  # S is defined beside the equation
