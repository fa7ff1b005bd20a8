"""Head claims in AppTest: every figure on the page is the API's (attnviz.analysis) for the settings on screen;
bad links and an empty set of heads get warnings; Find the head opens it; the explorer's contribution tab."""

import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
import torch
from apptest_helpers import assert_healthy, drawn_heatmap, page_text, run_app

from attnviz.analysis.ablation_effects import compare_with_same_size, coreference_closeness
from attnviz.analysis.claims import claim_score, head_ranks, head_table, item_scores, run_corpus
from attnviz.analysis.contribution import contribution_norms
from attnviz.analysis.corpus import load_corpus
from attnviz.analysis.corpus_shares import corpus_special_shares
from attnviz.lessons.head_claims.outcomes import embedding_outcome, loss_outcome

PAGE = "app_pages/head_claims.py"
TEXT = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def minilm_page():
    return run_app({"text": TEXT, "hc_relation": "coreference", "hc_layer": "5", "hc_head": "11",
                    "hc_ablate": ["L5 H11"]}, page=PAGE, timeout=900)


@pytest.fixture(scope="module")
def corpus_run(minilm):
    return run_corpus(minilm, load_corpus())


def markdown_starting(at, start: str) -> str:
    return next(str(m.value) for m in at.markdown if str(m.value).startswith(start))


def test_the_claim_and_its_baselines_are_the_apis(minilm_page, corpus_run):
    at = minilm_page
    assert_healthy(at)
    scores = item_scores(corpus_run, "coreference")
    score = claim_score(corpus_run, "coreference", 5, 11, scores)
    sentence = markdown_starting(at, "**Layer 5, head 11**")
    assert f"**{score.hit_rate:.0%}** of 300 labelled queries" in sentence
    assert f"**{score.mean_weight:.3f}**" in sentence and f"**{score.column_mean:.3f}**" in sentence
    assert "nearly as much, so this head looks at that key from everywhere" in sentence  # 0.213 against 0.254
    assert f"ranks **{score.rank} of 72** heads" in sentence and "right in **50%**" in sentence
    table = at.dataframe[0].value
    assert table.iloc[0]["top key is labelled"] == pytest.approx(score.hit_rate)
    assert table.iloc[0]["mean weight on it"] == pytest.approx(score.mean_weight)
    assert table.iloc[1]["what"] == "the best other head, L3 H1"
    assert table.iloc[3]["mean weight on it"] == pytest.approx(score.column_mean)
    assert table.iloc[4]["top key is labelled"] == pytest.approx(0.5)
    drawn, rows, cols = drawn_heatmap(at, "hc_map")
    np.testing.assert_allclose(drawn, head_table(scores)[0].numpy(), atol=1e-4)


def test_the_failing_sentences_are_listed_with_links_to_the_explorer(minilm_page, corpus_run):
    at = minilm_page
    score = claim_score(corpus_run, "coreference", 5, 11)
    assert f"**Where it fails: {len(score.failing)} of 300.**" in page_text(at)
    failing = at.dataframe[1].value
    assert len(failing) == 30
    first = corpus_run.corpus.items("coreference")[score.failing[0]]
    sentence = corpus_run.corpus.sentences[first.sentence]
    assert failing.iloc[0]["sentence"] == sentence.text
    link = failing.iloc[0]["open"]
    assert link.startswith("./?text=") and "layer=5" in link and "heads=11" in link
    assert f"sbs_query={first.query}%3A+" in link and f"sbs_key={first.keys[0]}%3A+" in link


def test_the_knock_out_and_the_contribution_rows_are_the_apis(minilm_page, minilm, corpus_run):
    at = minilm_page

    outcome = embedding_outcome(minilm, load_corpus())
    value = outcome.value(((5, 11),), "zero")
    sentence = markdown_starting(at, "Knocking out **L5 H11**")
    assert f"from **0.000** to **{value:.3f}**" in sentence and "seeded sample of 12 other single heads" in sentence
    # the pronoun's closeness, with nothing and with L5 H11 knocked out: each forward from the embeddings here
    coref = at.dataframe[2].value
    for row, heads in ((0, ()), (1, ((5, 11),))):
        expected = coreference_closeness(minilm, outcome.sample, outcome.batch, heads, "zero", outcome.means)
        assert coref.iloc[row]["cos(pronoun, antecedent)"] == pytest.approx(expected.to_antecedent, abs=1e-6)
        assert coref.iloc[row]["cos(pronoun, other noun)"] == pytest.approx(expected.to_other, abs=1e-6)
        assert coref.iloc[row]["closer to antecedent"] == pytest.approx(expected.closer_to_antecedent)
    assert coref.iloc[1]["cos(pronoun, antecedent)"] != coref.iloc[0]["cos(pronoun, antecedent)"]
    res = minilm.run(TEXT, keep=True)
    query = res.tokens.index("it")
    alpha, _, _ = drawn_heatmap(at, "hc_alpha")
    np.testing.assert_allclose(alpha[0], res.attentions[5, 11, query].numpy(), atol=1e-4)
    norms, _, _ = drawn_heatmap(at, "hc_norm")
    expected = contribution_norms(minilm, res.traces, 5)[0, 11, query].numpy()
    np.testing.assert_allclose(norms[0], expected, atol=0.01 * expected.max())
    weight_share, norm_share = corpus_special_shares(minilm, corpus_run.corpus)
    assert (f"**{float(weight_share[5, 11]):.0%}** of layer 5, head 11's weight goes to [CLS], [SEP] and punctuation, "
            f"but only **{float(norm_share[5, 11]):.0%}**") in page_text(at)
    assert "another head may do the same work and cover for it" in page_text(at)


def test_tiny_llama_knocks_out_its_induction_heads_against_all_27_other_pairs(tiny_llama):
    at = run_app({"model": "tiny-llama", "text": "the cat sat on the mat"}, page=PAGE, timeout=900)
    assert_healthy(at)
    assert any("splits the corpus's sentences differently" in str(w.value) for w in at.warning)
    outcome = loss_outcome(tiny_llama)
    comparison = compare_with_same_size(tiny_llama, [(1, 0), (1, 1)], lambda hs: outcome.value(hs, "zero"))
    sentence = markdown_starting(at, "Knocking out **L1 H0, L1 H1**")
    assert (f"from **{comparison.baseline:.3f}** to **{comparison.chosen_value:.3f}** nats. Of all 27 other sets "
            "of 2, **100%** do less damage") in sentence
    assert f"ln V ≈ {outcome.chance:.2f} nats" in sentence
    assert [float(x) for x in re.findall(r"\d+\.\d+", sentence)[:2]] == pytest.approx(
        [comparison.baseline, comparison.chosen_value], abs=1e-3)


def test_an_empty_set_of_heads_and_a_head_out_of_range_get_warnings(tiny_llama):
    at = run_app({"model": "tiny-llama", "text": "the cat sat", "hc_layer": "7", "hc_head": "2",
                  "hc_ablate": ["L5 H11", "L1 H0"]}, page=PAGE, timeout=900)
    assert_healthy(at)
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "The link asks for layer 7, which this model does not have (layers 0 to 1)" in warnings
    assert "L5 H11: no such head in attnviz-tiny-llama (layers 0 to 1, heads 0 to 3)" in warnings
    assert at.multiselect(key="hc_ablate").value == ["L1 H0"]
    assert any(str(m.value).startswith("Knocking out **L1 H0**") for m in at.markdown)
    at.multiselect(key="hc_ablate").set_value([]).run()
    assert "Pick at least one head to knock out (the set is empty)" in " ".join(str(w.value) for w in at.warning)
    assert not at.exception and not at.error


def test_find_the_head_opens_the_claim_for_a_drawn_head():
    at = run_app({"text": TEXT, "fh_query": "10", "fh_key": "2"}, page="app_pages/find_head.py")
    at.button(key="fh_claim_1").click().run(timeout=900)
    assert at.session_state["hc_layer"] == 3 and at.session_state["hc_head"] == 1
    assert at.session_state["hc_relation"] == "coreference"
    assert any(str(m.value).startswith("**Layer 3, head 1**") for m in at.markdown)


def test_the_explorers_contribution_tab_shows_the_clicked_row(minilm):
    text = "The cat sat on the mat."
    at = run_app({"text": text, "layer": "2", "heads": ["3"]})
    at.session_state["grid"] = {"selection": {"panel": 0, "row": 4, "col": 2}}
    at.run()
    assert_healthy(at)
    res = minilm.run(text, keep=True)
    alpha, _, _ = drawn_heatmap(at, "why_alpha")
    norms, _, _ = drawn_heatmap(at, "why_norm")
    np.testing.assert_allclose(alpha[0], res.attentions[2, 3, 4].numpy(), atol=1e-4)
    expected = contribution_norms(minilm, res.traces, 2)[0, 3, 4]
    np.testing.assert_allclose(norms[0], expected.numpy(), atol=0.01 * float(expected.max()))
    caption = next(str(c.value) for c in at.caption if str(c.value).startswith("Key 2"))
    share = float(expected[2] / expected.sum())
    assert f"({share:.0%} of the row's total length)" in caption
    assert torch.isclose(res.attentions[2, 3, 4].sum(), torch.tensor(1.0))


def test_a_first_visit_opens_on_the_relations_best_head_and_knocks_it_out(corpus_run):
    """No head in the link: the pickers open on the head with the highest hit rate for the relation (computed here
    with the API, not read off the page), the claim is that head's and the knock-out knocks it out."""
    at = run_app({"text": TEXT, "hc_relation": "coreference"}, page=PAGE, timeout=900)
    assert_healthy(at)
    layer, head = head_ranks(item_scores(corpus_run, "coreference"))[0]
    assert (at.selectbox(key="hc_layer").value, at.selectbox(key="hc_head").value) == (layer, head)
    assert markdown_starting(at, f"**Layer {layer}, head {head}**")
    assert at.multiselect(key="hc_ablate").value == [f"L{layer} H{head}"]
    assert markdown_starting(at, f"Knocking out **L{layer} H{head}**")
    # another relation: the pickers follow to its best head, since the page chose the one shown
    at.selectbox(key="hc_relation").set_value("same_word").run(timeout=900)
    layer, head = head_ranks(item_scores(corpus_run, "same_word"))[0]
    assert (at.selectbox(key="hc_layer").value, at.selectbox(key="hc_head").value) == (layer, head)
    assert markdown_starting(at, f"Knocking out **L{layer} H{head}**")


def test_the_knock_out_follows_the_head_picked_and_a_picked_head_stays_on_another_relation():
    """Before: after picking a head, the knock-out section still knocked out the head the page opened on (L0 H0)."""
    at = run_app({"text": TEXT, "hc_relation": "coreference", "hc_layer": "0", "hc_head": "0"}, page=PAGE,
                 timeout=900)
    assert markdown_starting(at, "Knocking out **L0 H0**")  # the link's head, not the best one
    at.selectbox(key="hc_layer").set_value(2).run(timeout=900)
    at.selectbox(key="hc_head").set_value(5).run(timeout=900)
    assert_healthy(at)
    assert markdown_starting(at, "**Layer 2, head 5**")
    assert at.multiselect(key="hc_ablate").value == ["L2 H5"]
    assert markdown_starting(at, "Knocking out **L2 H5**")
    at.selectbox(key="hc_relation").set_value("verb_subject").run(timeout=900)
    assert (at.selectbox(key="hc_layer").value, at.selectbox(key="hc_head").value) == (2, 5)
    assert markdown_starting(at, "**Layer 2, head 5**")


def test_a_head_picked_after_the_page_chose_one_stays_on_another_relation(corpus_run):
    at = run_app({"text": TEXT, "hc_relation": "coreference"}, page=PAGE, timeout=900)
    best = head_ranks(item_scores(corpus_run, "coreference"))[0]
    other = (best[0], (best[1] + 1) % 12)
    at.selectbox(key="hc_head").set_value(other[1]).run(timeout=900)
    at.selectbox(key="hc_relation").set_value("specials").run(timeout=900)
    assert_healthy(at)
    assert (at.selectbox(key="hc_layer").value, at.selectbox(key="hc_head").value) == other
    assert markdown_starting(at, f"Knocking out **L{other[0]} H{other[1]}**")
