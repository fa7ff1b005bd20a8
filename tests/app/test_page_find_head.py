"""Find the head in Streamlit's AppTest: the map, the table and the drawn heads hold attnviz's own weights for the
pair, at the settings on screen; links name tokens by position or text; bad links and texts get messages; the
button opens the explorer on that layer, head and pair."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_grid, drawn_heatmap, heatmap_payloads, page_text, run_app

import attnviz
from attnviz.draw.heatmap_payload import decode_payload

PAGE = "app_pages/find_head.py"
TEXT = "The animal didn't cross the street because it was too tired."
IT, ANIMAL = 10, 2


def alerts(at, kind: str) -> str:
    return "\n".join(str(e.value) for e in getattr(at, kind))


def table(at):
    return at.dataframe[0].value


@pytest.fixture(scope="module")
def it_animal():
    return run_app({"text": TEXT, "fh_query": str(IT), "fh_key": str(ANIMAL)}, page=PAGE)


def test_the_map_and_the_table_hold_every_heads_weight_for_the_pair(it_animal, minilm):
    at = it_animal
    assert_healthy(at)
    res = minilm.run(TEXT)
    assert (res.tokens[IT], res.tokens[ANIMAL]) == ("it", "animal")
    expected = res.attentions[:, :, IT, ANIMAL].numpy()  # (6, 12), straight from the run
    drawn, rows, cols = drawn_heatmap(at, "fh_map")
    np.testing.assert_allclose(drawn, expected, atol=1e-4)
    assert rows == [f"layer {layer}" for layer in range(6)] and cols == [f"head {h}" for h in range(12)]
    meta, _ = decode_payload(heatmap_payloads(at)["fh_map"])
    assert meta["axis_words"] == ["layer", "head"] and meta["y_title"] == "layer"  # the hover says layer / head
    shown = table(at)
    assert len(shown) == 72 and list(shown["rank"]) == list(range(1, 73))
    np.testing.assert_allclose(shown["weight"], np.sort(expected.flatten())[::-1], atol=1e-6)
    for _, row in shown.iterrows():
        assert row["weight"] == pytest.approx(float(expected[int(row["layer"]), int(row["head"])]), abs=1e-6)
    np.testing.assert_allclose(shown["× even spread"], shown["weight"] * 16, rtol=1e-6)
    assert (shown.iloc[0]["layer"], shown.iloc[0]["head"]) == (3, 1)


def test_the_sentence_names_layer_3_head_1_and_0_68(it_animal, minilm):
    text = page_text(it_animal)
    assert "**Layer 3, head 1** gives the most: **0.68** of query it \\(10\\)'s attention goes to key animal \\(2\\)" in text
    expected = minilm.run(TEXT).attentions[:, :, IT, ANIMAL]
    many = int((expected >= 0.5).sum())
    assert f"{many} of the 72 heads {'gives' if many == 1 else 'give'} it half or more" in text
    assert f"the median head gives {float(np.median(expected.numpy())):.3f}." in text
    assert "√32" in text and "mask `none`" in text


def test_the_best_heads_are_drawn_in_full_with_the_pair_ringed(it_animal, minilm):
    res = minilm.run(TEXT)
    order = np.argsort(-res.attentions[:, :, IT, ANIMAL].flatten().numpy(), kind="stable")[:3]
    for rank, flat in enumerate(order, start=1):
        layer, head = divmod(int(flat), 12)
        drawn, rows, _ = drawn_heatmap(it_animal, f"fh_head_{rank}")
        np.testing.assert_allclose(drawn, res.attentions[layer, head].numpy(), atol=1e-4)
        meta, _ = decode_payload(heatmap_payloads(it_animal)[f"fh_head_{rank}"])
        assert meta["selection"] == {"panel": 0, "row": IT, "col": ANIMAL}
        assert meta["titles"][0].startswith(f"#{rank} · layer {layer}, head {head} · ")
    assert not any(key.startswith("fh_head_4") for key in heatmap_payloads(it_animal))


def test_a_link_may_name_the_tokens_by_text_and_gets_positions_back(minilm):
    at = run_app({"text": TEXT, "fh_query": "it", "fh_key": "Animal", "fh_top": "1"}, page=PAGE)
    assert_healthy(at)
    assert at.selectbox(key="fh_query").value == IT and at.selectbox(key="fh_key").value == ANIMAL
    assert at.query_params["fh_query"] == str(IT) and at.query_params["fh_key"] == str(ANIMAL)
    assert "fh_head_1" in heatmap_payloads(at) and "fh_head_2" not in heatmap_payloads(at)


def test_picking_another_pair_and_the_settings_on_screen(minilm):
    at = run_app({"text": TEXT, "fh_query": str(IT), "fh_key": str(ANIMAL), "mask": "causal", "scaled": "false"},
                 page=PAGE)
    assert_healthy(at)
    res = minilm.run(TEXT, mask="causal", scale=False)
    np.testing.assert_allclose(drawn_heatmap(at, "fh_map")[0], res.attentions[:, :, IT, ANIMAL].numpy(), atol=1e-4)
    assert "mask `causal`" in page_text(at) and "over the 11 keys it may see" in page_text(at)
    at.selectbox(key="fh_key").set_value(12).run()  # 'too', after 'it': the causal mask forbids it
    assert_healthy(at)
    assert "The mask forbids query it \\(10\\) from seeing key too \\(12\\)" in alerts(at, "warning")
    np.testing.assert_allclose(drawn_heatmap(at, "fh_map")[0], 0.0, atol=1e-7)


@pytest.mark.parametrize("query,key,message", [
    ("dog", "2", "“dog” is not a token of this text, so it cannot be the query token"),
    ("10", "99", "There is no key token at position 99: this text has 16 tokens, positions 0 to 15."),
    ("-3", "2", "There is no query token at position -3"),
])
def test_a_token_the_text_does_not_have_is_said_and_the_page_still_works(query, key, message, minilm):
    at = run_app({"text": TEXT, "fh_query": query, "fh_key": key}, page=PAGE)
    assert_healthy(at)
    assert message in alerts(at, "error")
    assert "instead" in alerts(at, "error")
    assert "fh_map" in heatmap_payloads(at) and len(table(at)) == 72


def test_a_token_the_new_text_lacks_moves_to_the_default_and_is_named():
    at = run_app({"text": TEXT, "fh_query": str(IT), "fh_key": str(ANIMAL)}, page=PAGE)
    at.text_area(key="text").set_value("the cat sat").run()  # [CLS] the cat sat [SEP]: no "it", no "animal"
    assert_healthy(at)
    said = alerts(at, "info")
    assert "The query token “it” (10) is not in the new text: showing “cat” (2) instead." in said
    assert "The key token “animal” (2) is not in the new text: showing “the” (1) instead." in said
    assert (at.selectbox(key="fh_query").value, at.selectbox(key="fh_key").value) == (2, 1)


def test_a_position_past_the_end_in_a_link_moves_to_the_last_token():
    at = run_app({"text": "the cat sat", "fh_query": "10", "fh_key": "1"}, page=PAGE)
    assert_healthy(at)
    assert "There is no query token at position 10: this text has 5 tokens" in alerts(at, "error")


@pytest.mark.parametrize("text", ["", "   \n "])
def test_empty_text_asks_for_text(text):
    at = run_app({"text": text}, page=PAGE)
    assert_healthy(at)
    assert "The ranking appears as soon as there is text." in alerts(at, "warning")
    assert not heatmap_payloads(at)


def test_a_text_longer_than_the_model_takes_is_cut_and_says_so(minilm):
    text = "word " * 600
    at = run_app({"text": text, "fh_query": "600", "fh_key": "1"}, page=PAGE)
    assert_healthy(at)
    assert "512 tokens" in alerts(at, "info") and "cut" in alerts(at, "info")
    assert "There is no query token at position 600: this text has 512 tokens" in alerts(at, "error")
    res = minilm.run(text)
    np.testing.assert_allclose(drawn_heatmap(at, "fh_map")[0], res.attentions[:, :, 2, 1].numpy(), atol=1e-4)


def test_open_in_the_explorer_opens_that_layer_head_and_pair(it_animal, minilm):
    at = run_app({"text": TEXT, "fh_query": str(IT), "fh_key": str(ANIMAL)}, page=PAGE)
    at.button(key="fh_open_1").click().run()
    assert_healthy(at)
    assert [t.value for t in at.title] == ["Attention explorer"]
    assert at.selectbox(key="layer").value == 3 and at.multiselect(key="heads").value == [1]
    grid = drawn_grid(at, "grid")
    assert len(grid) == 1 and next(iter(grid)).startswith("head 1 ")
    np.testing.assert_allclose(next(iter(grid.values()))[0], minilm.run(TEXT).attentions[3, 1].numpy(), atol=1e-4)
    assert "Layer 3, head 1: query 10 “it” → key 2 “animal”" in page_text(at)
    assert "weight `0.6768`" in page_text(at)


def test_with_no_pair_in_the_link_the_page_opens_on_it_and_animal():
    at = run_app({"text": TEXT}, page=PAGE)
    assert_healthy(at)
    assert (at.selectbox(key="fh_query").value, at.selectbox(key="fh_key").value) == (IT, ANIMAL)
    assert "Layer 3, head 1" in page_text(at)


def test_the_table_puts_the_other_queries_mean_beside_each_weight():
    at = run_app({"text": TEXT, "fh_query": str(IT), "fh_key": str(ANIMAL)}, page=PAGE)
    shown = table(at)
    assert list(shown.columns)[3:6] == ["weight", "others", "column"]
    a = attnviz_run().attentions
    for _, row in shown.head(3).iterrows():
        column = a[int(row["layer"]), int(row["head"]), :, ANIMAL]
        assert row["others"] == pytest.approx(float((column.sum() - column[IT]) / 15), abs=1e-6)
        assert bool(row["column"]) == (row["others"] >= 0.5 * row["weight"])
    said = " ".join(m.value for m in at.markdown)
    assert "Column heads (the other queries give animal \\(2\\) at least 0.5× this query's weight" in said
    assert "layer 5 head 11 (others 0.40 vs 0.67)" in said


def attnviz_run():
    return attnviz.load_model().run(TEXT)
