"""The Head claims page's computations, made once per server and shared by every session (ui.memo): a page
script runs anew on every rerun, so a cache defined in it would be made anew too."""

from __future__ import annotations

import streamlit as st

from attnviz.analysis.ablation_effects import compare_with_same_size
from attnviz.analysis.claims import head_ranks, item_scores, run_corpus
from attnviz.analysis.corpus import load_corpus
from attnviz.analysis.corpus_shares import corpus_special_shares
from attnviz.errors import AttnvizError
from attnviz.lessons.head_claims.outcomes import closeness, embedding_outcome, loss_outcome
from ui.memo import SharedCache, shared
from ui.runs import model_for


@shared(max_entries=4)
def corpus_run(spec: str, device: str):
    """(the corpus run, None) or (None, why this model cannot be scored on the corpus)."""
    try:
        return run_corpus(model_for(spec, device), load_corpus(), value_norms=True), None
    except AttnvizError as err:
        return None, str(err)


@shared(max_entries=16)
def relation_scores(spec: str, device: str, relation: str):
    return item_scores(corpus_run(spec, device)[0], relation)


@shared(max_entries=16)
def best_head(spec: str, device: str, relation: str) -> tuple[int, int]:
    """The (layer, head) with the highest hit rate on the relation over the corpus (ties: mean weight, then order)."""
    return head_ranks(relation_scores(spec, device, relation))[0]


@shared(max_entries=4)
def special_shares(spec: str, device: str):
    run = corpus_run(spec, device)[0]
    return corpus_special_shares(model_for(spec, device), run.corpus, run)  # from the run's own pass


@shared(max_entries=4)
def outcome_for(spec: str, device: str):
    model = model_for(spec, device)
    if model.cfg.causal and model.lm_head is not None:
        return loss_outcome(model)
    return embedding_outcome(model, load_corpus())


@shared(max_entries=32)
def closeness_for(spec: str, device: str, heads: tuple, kind: str):
    """(before, after): the pronoun's closeness to each candidate with nothing and with these heads knocked out."""
    return closeness(model_for(spec, device), outcome_for(spec, device), heads, kind)


COMPARISONS = SharedCache(max_entries=32)  # (spec, device, heads, kind, limit) -> SetComparison


@shared(max_entries=1024)
def outcome_value(spec: str, device: str, heads: tuple, kind: str) -> float:
    """The outcome with these heads knocked out: kept per set, since every comparison of an encoder's single heads
    knocks out the same seeded sample of others (and a causal model's pairs are all 28 pairs): a head picked after
    the first costs its own forward, not the sample's 12 again."""
    return outcome_for(spec, device).value(heads, kind)


def comparison_for(spec: str, device: str, heads: tuple, kind: str, limit: int):
    def make():  # with a progress bar, shown only while it is computed
        bar = st.progress(0.0, text=f"Knocking out every compared set of {len(heads)} heads, one forward pass each…")
        comparison = compare_with_same_size(
            model_for(spec, device), heads, lambda hs: outcome_value(spec, device, tuple(hs), kind), limit=limit,
            progress=lambda f: bar.progress(f, text=f"Knocking out sets of {len(heads)} heads: {f:.0%}"))
        bar.empty()
        return comparison

    return COMPARISONS.get((spec, device, heads, kind, limit), make)
