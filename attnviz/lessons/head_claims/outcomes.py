"""The Head claims page's ablation panel: which outcome a model has, computed with attnviz.analysis.

- a causal LM (attnviz-tiny-llama): the mean loss on the repeated half of 64 seeded sequences [BOS] A A (A = 20
  random words), in nats, with the chance line ln V;
- an encoder with the corpus's tokenizer (all-MiniLM-L6-v2): 1 − the cosine between the pooled sentence embedding
  with the heads knocked out and without, averaged over a sample of the corpus (both readings of every fifth noun
  pair: 60 sentences), and the pronoun's closeness to each candidate.
Higher is worse for both, so the chart reads the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.analysis.ablation import clean_run
from attnviz.analysis.ablation_effects import (
    CoreferenceCloseness,
    chance_loss,
    closeness_in,
    coreference_closeness,
    embedding_cosines,
    mean_pooled,
    repeated_half_losses,
)
from attnviz.analysis.corpus import Corpus, CorpusBatch, encode_corpus
from attnviz.analysis.repeats import repeated_random_batch

SEQUENCES, HALF, SEED = 64, 20, 0
EVERY_NTH_PAIR = 5  # the page's MiniLM sample: both readings of every fifth noun pair


@dataclass
class Outcome:
    """One model's outcome of an ablation: value(heads, kind) -> a number, higher = more broken."""

    name: str  # what the number is, in the page's sentences
    axis: str  # the same, short enough for the chart's axis on a phone
    unit: str
    chance: float | None  # the chance line (ln V), None where there is none
    describe: str  # how it is measured, one sentence
    value: object  # value(heads: tuple, kind: str) -> float
    baseline: float  # the value with nothing ablated
    sample: Corpus | None = None  # the encoder's sentences, their batch and the heads' means over them
    batch: CorpusBatch | None = None
    means: torch.Tensor | None = None
    streams: list | None = None  # the clean stream entering each layer (ablation.clean_streams): where a knock-out starts
    clean_closeness: CoreferenceCloseness | None = None  # the pronoun's closeness with nothing knocked out


def corpus_sample(corpus: Corpus) -> Corpus:
    """Both readings of every EVERY_NTH_PAIR-th noun pair (sentences come in reading pairs, 2i and 2i + 1)."""
    chosen = [i for i in range(len(corpus.sentences)) if (i // 2) % EVERY_NTH_PAIR == 0]
    return corpus.subset(chosen, f"{corpus.name} (sample)")


def loss_outcome(model) -> Outcome:
    batch = repeated_random_batch(model, SEQUENCES, HALF, SEED)
    run = clean_run(model, batch.ids, None)  # one clean forward (the model's causal mask): the means and the streams
    means = run.head_means(torch.ones_like(batch.ids, dtype=torch.bool))
    streams = run.streams

    def value(heads, kind="zero"):
        return float(repeated_half_losses(model, batch, heads, kind, means, streams).mean())

    return Outcome("loss on the repeated half", "loss, repeated half", "nats", chance_loss(model),
                   f"the mean next-token loss on the repeated half of {SEQUENCES} seeded sequences [BOS] A A "
                   f"(A = {HALF} random words, seed {SEED}), in nats", value, value(()))


def embedding_outcome(model, corpus: Corpus) -> Outcome:
    sample = corpus_sample(corpus)
    batch = encode_corpus(model, sample)
    run = clean_run(model, batch.ids, batch.mask)  # one clean forward for all four below (the rest of it is let go)
    clean = mean_pooled(run.hidden, batch.real).float().cpu()  # = pooled_embeddings(model, batch)
    means = run.head_means(batch.real)
    streams, clean_closeness = run.streams, closeness_in(run.hidden, sample)

    def value(heads, kind="zero"):
        if not heads:
            return 0.0
        return float(1 - embedding_cosines(model, batch, heads, kind, means, clean, streams).mean())

    return Outcome("1 − cosine to the unablated sentence embedding", "1 − cos(embedding)", "", None,
                   f"1 − the cosine between each sentence's pooled embedding (the mean of its final vectors) with "
                   f"the heads knocked out and without, averaged over {len(sample.sentences)} sentences of the "
                   "corpus (both readings of every fifth noun pair)", value, 0.0, sample, batch, means, streams,
                   clean_closeness)


def closeness(model, outcome: Outcome, heads, kind: str) -> tuple[CoreferenceCloseness, CoreferenceCloseness]:
    """The pronoun's closeness to its antecedent and to the other candidate, before and after (MiniLM only)."""
    return outcome.clean_closeness, coreference_closeness(model, outcome.sample, outcome.batch, heads, kind,
                                                          outcome.means, outcome.streams)
