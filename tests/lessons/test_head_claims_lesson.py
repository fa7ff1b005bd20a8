"""The Head claims page's sentences and links at their edges (built from the API's numbers only)."""

from urllib.parse import parse_qs, urlsplit

from attnviz.analysis.ablation_effects import SetComparison
from attnviz.analysis.claims import ClaimScore
from attnviz.analysis.corpus import load_corpus
from attnviz.lessons.head_claims.figures import comparison_figure
from attnviz.lessons.head_claims.outcomes import corpus_sample
from attnviz.lessons.head_claims.text import ablation_sentence, claim_sentence, explorer_link, shares_sentence


def score(weight, column, by_reading=None):
    return ClaimScore("same_word", 0, 8, 300, 1.0, weight, column, 1, 72, 0.0, (), by_reading)


def test_the_claim_sentence_says_whether_the_query_matters():
    near = claim_sentence(score(0.254, 0.213), "same_word")
    assert "nearly as much, so this head looks at that key from everywhere" in near
    far = claim_sentence(score(0.411, 0.050), "same_word")
    assert "8.2× less, so the query matters" in far and "from everywhere" not in far
    assert "Split by reading" not in far


def test_the_ablation_sentence_names_single_heads_and_pairs_and_the_chance_line():
    one = ablation_sentence(((5, 11),), "zero", 0.056, 0.0, 1.0, 12, "1 − cosine", "", None, True)
    assert "a seeded sample of 12 other single heads, **100%** do less damage" in one and "ln V" not in one
    two = ablation_sentence(((1, 0), (1, 1)), "mean", 5.38, 1.36, 1.0, 27, "loss", "nats", 6.92, False)
    assert "**L1 H0, L1 H1** (mean-ablation)" in two and "all 27 other sets of 2" in two
    assert "from **1.360** to **5.380** nats" in two and "ln V ≈ 6.92 nats" in two


def test_the_shares_sentence_only_says_weight_is_not_importance_when_the_norm_share_is_smaller():
    assert "weight is not importance" in shares_sentence(5, 11, 0.43, 0.07, 300)
    assert "weight is not importance" not in shares_sentence(0, 0, 0.10, 0.20, 300)


def test_the_explorer_link_opens_the_sentence_layer_head_and_cell():
    corpus = load_corpus()
    item = corpus.items("coreference")[0]
    params = parse_qs(urlsplit(explorer_link(corpus, item, 5, 11, "all-MiniLM-L6-v2")).query)
    assert params["text"] == [corpus.sentences[0].text] and params["layer"] == ["5"] and params["heads"] == ["11"]
    assert params["sbs_head"] == ["11"] and params["sbs_query"] == ["11: it"] and params["sbs_key"] == ["2: book"]
    assert params["model"] == ["all-MiniLM-L6-v2"]


def test_the_pages_sample_keeps_both_readings_and_renumbers():
    sample = corpus_sample(load_corpus())
    assert len(sample.sentences) == 60
    ids = [s.id for s in sample.sentences]
    assert ids[0].endswith("-big") and ids[1].endswith("-small") and ids[0][:-4] == ids[1][:-6]
    assert [it.sentence for it in sample.items("coreference")] == list(range(60))


def test_the_knock_out_chart_names_its_reference_lines_in_the_legend_not_over_the_dots():
    """The unablated value and the chance line are legend entries with their values, drawn across the chart; written
    on the chart, "nothing knocked out: 0.000" sat on the dots of the least damaging heads (they lie near it)."""
    others = [(((0, h),), 0.001 * h) for h in range(12)]
    fig = comparison_figure(SetComparison(((5, 11),), 0.056, others, 0.0), "1 − cos(embedding)", "", None)
    assert not fig.layout.annotations
    assert [t.name for t in fig.data] == ["other sets", "your set", "nothing knocked out: 0.000"]
    line = fig.data[2]
    assert list(line.y) == [0.0, 0.0] and line.x[0] <= 1 and line.x[-1] >= 12.5  # across every dot and the diamond
    with_chance = comparison_figure(SetComparison(((1, 0), (1, 1)), 5.38, others, 1.36), "loss", "nats", 6.92)
    assert [t.name for t in with_chance.data][2:] == ["nothing knocked out: 1.360", "chance: ln V ≈ 6.92"]
    assert with_chance.data[3].line.dash == "dash"
