"""The shipped corpus, its loader's messages, and the claim score against hand counts, with the figures docs/pages.md states."""

import json

import pytest
import torch

import attnviz
from attnviz.analysis.claims import FARTHER, NEARER, claim_score, head_ranks, head_table, item_scores, run_corpus
from attnviz.analysis.corpus import RELATIONS, Corpus, check_tokens, encode_corpus, load_corpus
from attnviz.analysis.corpus_shares import corpus_special_shares
from attnviz.errors import AttnvizError
from attnviz.training import make_corpus


@pytest.fixture(scope="module")
def minilm():
    return attnviz.load_model()


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


@pytest.fixture(scope="module")
def run(minilm, corpus):
    return run_corpus(minilm, corpus)


def test_regenerating_the_corpus_gives_the_shipped_file_byte_for_byte(tmp_path):
    out = make_corpus.main(["--out", str(tmp_path / "again.jsonl")])
    assert out.read_bytes() == make_corpus.CORPUS_PATH.read_bytes()


def test_the_corpus_has_both_readings_of_every_pair_and_every_relation(corpus):
    assert len(corpus.sentences) == 300
    assert corpus.relations == list(RELATIONS)
    coref = corpus.items("coreference")
    assert len(coref) == 300
    farther = sum(it.keys[0] == min(it.candidates) for it in coref)
    assert farther == 150  # half the pronouns mean the farther noun, half the nearer
    by_id = {s.id: s for s in corpus.sentences}
    big, small = by_id["fit-00-big"], by_id["fit-00-small"]
    assert big.text == "The book didn't fit in the car because it was too big."
    (b,), (s,) = big.relations["coreference"], small.relations["coreference"]
    assert big.tokens[b.query] == "it" and big.tokens[b.keys[0]] == "book" and small.tokens[s.keys[0]] == "car"


def test_every_labelled_position_is_the_word_it_names(corpus):
    for sentence in corpus.sentences:
        tokens = sentence.tokens
        (same,) = sentence.relations["same_word"]
        assert tokens[same.query] == tokens[same.keys[0]] == "the"
        (coref,) = sentence.relations["coreference"]
        assert tokens[coref.query] in ("it", "he")
        assert all(tokens[k] in ("[CLS]", "[SEP]", ".", "'") for item in sentence.relations["specials"] for k in item.keys)
        assert all(item.keys == (item.query - 1,) for item in sentence.relations["previous_token"])


def test_minilm_splits_every_sentence_as_labelled_and_tiny_llama_is_refused(minilm, corpus):
    check_tokens(minilm, corpus)
    batch = encode_corpus(minilm, corpus)
    assert batch.ids.shape == (300, max(batch.lengths)) and int(batch.real.sum()) == sum(batch.lengths)
    with pytest.raises(AttnvizError, match="splits the corpus's sentences differently"):
        check_tokens(attnviz.load_model("attnviz-tiny-llama"), corpus)


def write(tmp_path, lines):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


GOOD = {"id": "a", "text": "It is.", "tokens": ["[CLS]", "it", "is", ".", "[SEP]"],
        "relations": {"previous_token": [{"query": 2, "keys": [1]}]}}


@pytest.mark.parametrize("line, message", [
    ("{not json", "line 2 is not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (json.dumps({"id": "b", "text": "x"}), "lacks tokens, relations"),
    (json.dumps({**GOOD, "relations": {"coreference": [{"query": 1, "keys": []}]}}), "has no target"),
    (json.dumps({**GOOD, "relations": {"coreference": [{"query": 1}]}}), "has no target"),
    (json.dumps({**GOOD, "relations": {"previous_token": [{"query": 9, "keys": [1]}]}}), "position 9 is not a token"),
    (json.dumps({**GOOD, "relations": {"rhymes": [{"query": 1, "keys": [0]}]}}), "'rhymes' is not a relation"),
    (json.dumps({**GOOD, "tokens": []}), "non-empty list"),
])
def test_a_malformed_corpus_gets_a_message_naming_its_line(tmp_path, line, message):
    with pytest.raises(AttnvizError, match=message):
        load_corpus(write(tmp_path, [json.dumps(GOOD), line]))


def test_a_missing_or_empty_corpus_and_an_unlabelled_relation(tmp_path):
    with pytest.raises(AttnvizError, match="The shipped corpora are: relations"):
        load_corpus("nonesuch")
    with pytest.raises(AttnvizError, match="has no sentences"):
        load_corpus(write(tmp_path, ["", "  "]))
    one = load_corpus(write(tmp_path, [json.dumps(GOOD)]))
    with pytest.raises(AttnvizError, match="labels no sentence with the relation 'coreference'"):
        one.items("coreference")


def test_claim_scores_equal_a_hand_count(run, corpus):
    scores = item_scores(run, "coreference")
    layer, head = 5, 11
    hits, weights, columns = 0, [], []
    for it in corpus.items("coreference"):
        a = run.attentions[it.sentence, layer, head]  # (T, T)
        n = len(corpus.sentences[it.sentence].tokens)
        hits += int(a[it.query].argmax()) in it.keys
        weights.append(float(a[it.query, it.keys[0]]))
        columns.append(float(sum(a[q, it.keys[0]] for q in range(n) if q != it.query)) / (n - 1))
    score = claim_score(run, "coreference", layer, head, scores)
    assert score.n_items == 300 and score.hit_rate == pytest.approx(hits / 300)
    assert score.mean_weight == pytest.approx(sum(weights) / 300, abs=1e-6)
    assert score.column_mean == pytest.approx(sum(columns) / 300, abs=1e-6)
    assert len(score.failing) == 300 - hits
    assert score.rule_hit_rate == 0.5  # the nearest noun before the pronoun is right in one reading of two


def test_padding_changes_no_weight(minilm, run, corpus):
    """The batched run's weights are the single-sentence run's, padding masked (to float noise)."""
    T = run.attentions.shape[-1]
    padded = [i for i, s in enumerate(corpus.sentences) if len(s.tokens) < T]
    assert padded
    for i in (0, padded[0], padded[-1], 299):
        alone = minilm.run(corpus.sentences[i].text).attentions  # (L, H, n, n)
        n = alone.shape[-1]
        torch.testing.assert_close(run.attentions[i, :, :, :n, :n], alone, atol=1e-5, rtol=0)
        assert float(run.attentions[i, :, :, :, n:].abs().sum()) == 0.0


def test_minilm_figures_as_the_readme_states_them(run):
    """docs/pages.md's statement of what the corpus shows for MiniLM (measured; see its "Head claims" section)."""
    scores = item_scores(run, "coreference")
    best = head_ranks(scores)[0]
    top = claim_score(run, "coreference", *best, scores)
    assert best == (3, 1) and top.hit_rate == pytest.approx(0.533, abs=0.002)
    # its hits are the subject's: far better when the antecedent is the farther noun (the subject) than the nearer
    assert top.by_reading[FARTHER] == pytest.approx(0.8, abs=0.002)
    assert top.by_reading[NEARER] == pytest.approx(0.267, abs=0.002)
    assert top.hit_rate - top.rule_hit_rate < 0.05  # hardly above the nearest-noun rule's 0.5
    # layer 5, head 11: the antecedent gets almost as much from every other query as from the pronoun
    l5h11 = claim_score(run, "coreference", 5, 11, scores)
    assert l5h11.mean_weight == pytest.approx(0.254, abs=0.002) and l5h11.column_mean == pytest.approx(0.213, abs=0.002)
    assert l5h11.rank == 3
    # the easy relations have a head that meets them every time
    for relation in ("previous_token", "same_word"):
        hit, _, _ = head_table(item_scores(run, relation))
        assert float(hit.max()) == 1.0


def test_special_tokens_take_weight_but_add_little(minilm, corpus):
    """The shares docs/pages.md and the plan state for layer 5, head 11, and over all heads."""
    weight_share, norm_share = corpus_special_shares(minilm, corpus)  # (L, H) each
    assert (round(float(weight_share[5, 11]), 2), round(float(norm_share[5, 11]), 2)) == (0.43, 0.07)
    assert float(weight_share.mean()) > 2 * float(norm_share.mean())  # 55% of the weight, 18% of the norm
    assert bool((norm_share <= weight_share + 0.05).all())


def test_a_subset_numbers_its_items_anew(corpus):
    few = corpus.subset([10, 11])
    assert [s.id for s in few.sentences] == [corpus.sentences[10].id, corpus.sentences[11].id]
    assert [it.sentence for it in few.items("coreference")] == [0, 1]


def test_a_head_out_of_range_is_refused(run):
    with pytest.raises(AttnvizError, match="no layer 6, head 0"):
        claim_score(run, "coreference", 6, 0)
    with pytest.raises(AttnvizError, match="'nonsense' is not a relation"):
        item_scores(run, "nonsense")


def test_a_corpus_object_can_be_made_by_hand(minilm):
    one = load_corpus()
    few = Corpus("few", one.sentences[:4])
    assert run_corpus(minilm, few).attentions.shape[0] == 4
