"""What breaks when heads are knocked out: outcomes the models have, measured with and without the ablation.

- A causal LM on repeated random words (repeats.RepeatedBatch): the mean next-token loss on the repeated half,
  in nats, against the chance line ln V (a uniform guess over the vocabulary).
- An encoder (all-MiniLM-L6-v2) on a corpus (corpus.CorpusBatch): the pooled sentence embedding, the mean of the
  final vectors over the real tokens (sentence-transformers' pooling for this model), as the cosine between the
  ablated and the unablated one (1 = unchanged); and, for coreference, the cosine of the pronoun's final vector
  to each candidate's.

Each outcome is compared with the same number of other heads knocked out (same_size_sets: all such sets, or a
seeded sample), since any ablation changes something. An ablation shows what the model loses without a head's
output; it cannot show what a head does when another head can do the same work and covers for it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnviz.analysis.ablation import ablated_forward, check_heads, check_kind, clean_run
from attnviz.analysis.corpus import Corpus, CorpusBatch
from attnviz.analysis.repeats import RepeatedBatch
from attnviz.errors import AttnvizError


def repeated_half_losses(model, batch: RepeatedBatch, heads=(), kind: str = "zero",
                         means: torch.Tensor | None = None, streams=None) -> torch.Tensor:
    """(N, P - 1) next-token losses in nats on the repeated half, -log p(token p + 1 | tokens ≤ p), heads ablated.
    streams: clean_streams of the batch, to start at the lowest ablated layer (ablated_forward)."""
    if model.lm_head is None or not model.cfg.causal:
        raise AttnvizError(f"{model.name} is not a causal language model: it has no next-token loss to measure.")
    hidden, _, _ = ablated_forward(model, batch.ids, None, heads, kind, means, streams=streams)  # the causal mask
    log_probs = torch.log_softmax(model.logits(hidden).float(), dim=-1).cpu()  # (N, T, V)
    nll = -log_probs[:, :-1].gather(2, batch.ids[:, 1:, None])[..., 0]  # (N, T - 1): position p predicts p + 1
    return nll[:, batch.second_copy_targets]  # (N, P - 1)


def chance_loss(model) -> float:
    """ln V: the loss of a uniform guess over the vocabulary."""
    return math.log(model.lm_head.shape[0])


def same_size_sets(model, size: int, limit: int = 200, seed: int = 0) -> list[tuple[tuple[int, int], ...]]:
    """Every set of `size` heads of the model, in (layer, head) order, or a seeded sample of `limit` of them when
    there are more (sorted, so the same call gives the same list)."""
    heads = [(layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)]
    if not 1 <= size <= len(heads):
        raise AttnvizError(f"A set of heads has 1 to {len(heads)} heads, not {size}.")
    if math.comb(len(heads), size) <= limit:
        return list(itertools.combinations(heads, size))
    rng = random.Random(seed)
    picked = set()
    while len(picked) < limit:
        picked.add(tuple(sorted(rng.sample(heads, size))))
    return sorted(picked)


@dataclass(frozen=True)
class SetComparison:
    chosen: tuple[tuple[int, int], ...]
    chosen_value: float
    others: list[tuple[tuple[tuple[int, int], ...], float]]  # every compared set and its value, the chosen excluded
    baseline: float  # the outcome with nothing ablated

    @property
    def share_below(self) -> float:
        """Share of the other sets whose value is below the chosen set's (1.0: the chosen one is the highest)."""
        return sum(v < self.chosen_value for _, v in self.others) / max(len(self.others), 1)


def compare_with_same_size(model, heads, outcome: Callable[[tuple], float], limit: int = 200, seed: int = 0,
                           progress: Callable[[float], None] | None = None) -> SetComparison:
    """outcome(heads) -> a number, for the chosen heads and for every other set of the same size (or a seeded
    sample of `limit`); progress(fraction done) after each."""
    chosen = check_heads(model, heads)
    sets = [s for s in same_size_sets(model, len(chosen), limit, seed) if s != chosen]
    values = []
    for n, s in enumerate(sets):
        values.append((s, outcome(s)))
        if progress:
            progress((n + 1) / (len(sets) + 2))
    chosen_value = outcome(chosen)
    baseline = outcome(())
    if progress:
        progress(1.0)
    return SetComparison(chosen, chosen_value, values, baseline)


def pooled_embeddings(model, batch: CorpusBatch, heads=(), kind: str = "zero", means=None,
                      streams=None) -> torch.Tensor:
    """(B, C): each sentence's final vectors averaged over its real tokens (mean pooling), heads ablated.
    streams: clean_streams of the batch, to start at the lowest ablated layer (ablated_forward)."""
    hidden, _, _ = ablated_forward(model, batch.ids, batch.mask, heads, kind, means, streams=streams)
    return mean_pooled(hidden, batch.real).float().cpu()


def mean_pooled(hidden: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """(B, T, C) final vectors -> (B, C): each sentence's mean over its real tokens (real (B, T) bool)."""
    weight = real.to(hidden.device).float()[..., None]  # (B, T, 1)
    return (hidden * weight).sum(1) / weight.sum(1)


def embedding_cosines(model, batch: CorpusBatch, heads, kind: str = "zero", means=None,
                      clean: torch.Tensor | None = None, streams=None) -> torch.Tensor:
    """(B,): cosine between each sentence's pooled embedding with the heads ablated and without (1 = unchanged).
    clean: pooled_embeddings(model, batch) if already computed; streams: as for pooled_embeddings."""
    clean = pooled_embeddings(model, batch) if clean is None else clean
    ablated = pooled_embeddings(model, batch, heads, kind, means, streams)
    return torch.nn.functional.cosine_similarity(ablated, clean, dim=-1)


@dataclass(frozen=True)
class CoreferenceCloseness:
    """Mean cosine of the pronoun's final vector to its antecedent's and to the other candidate's."""

    to_antecedent: float
    to_other: float
    closer_to_antecedent: float  # share of sentences where the pronoun is closer to its antecedent


def coreference_closeness(model, corpus: Corpus, batch: CorpusBatch, heads=(), kind: str = "zero",
                          means=None, streams=None) -> CoreferenceCloseness:
    """How close the pronoun's final vector is to each candidate's, over the corpus's coreference items.
    streams: clean_streams of the batch, to start at the lowest ablated layer (ablated_forward)."""
    hidden, _, _ = ablated_forward(model, batch.ids, batch.mask, heads, kind, means, streams=streams)
    return closeness_in(hidden, corpus)


def closeness_in(hidden: torch.Tensor, corpus: Corpus) -> CoreferenceCloseness:
    """coreference_closeness from the final vectors (B, T, C) of the corpus's batch."""
    items = [it for it in corpus.items("coreference") if len(it.candidates) == 2]
    hidden = hidden.float().cpu()  # (B, T, C)
    s = torch.tensor([it.sentence for it in items])
    pronoun = hidden[s, torch.tensor([it.query for it in items])]  # (N, C)
    antecedent = hidden[s, torch.tensor([it.keys[0] for it in items])]  # (N, C)
    other = hidden[s, torch.tensor([next(c for c in it.candidates if c != it.keys[0]) for it in items])]  # (N, C)
    cos = torch.nn.functional.cosine_similarity
    to_a, to_o = cos(pronoun, antecedent, dim=-1), cos(pronoun, other, dim=-1)  # (N,) each
    return CoreferenceCloseness(float(to_a.mean()), float(to_o.mean()), float((to_a > to_o).float().mean()))


def single_head_sweep(model, outcome: Callable[[tuple], float],
                      progress: Callable[[float], None] | None = None) -> torch.Tensor:
    """(L, H): outcome((layer, head),) for every single head; progress(fraction done) after each."""
    L, H = model.n_layers, model.n_heads
    values = torch.zeros(L, H)
    for f in range(L * H):
        layer, head = divmod(f, H)
        values[layer, head] = outcome(((layer, head),))
        if progress:
            progress((f + 1) / (L * H))
    return values


SWEEP_ROWS = 1200  # sentences per forward of embedding_sweep: 4 knock-outs of the 300-sentence corpus at once


def embedding_sweep(model, batch: CorpusBatch, kind: str = "zero", means=None,
                    progress: Callable[[float], None] | None = None) -> torch.Tensor:
    """(L, H): 1 − the mean cosine between the pooled embeddings with each single head knocked out and without,
    over the batch. Each knock-out starts from the clean stream entering its layer (Model.forward's resume): the
    layers below it are not run again, which makes the sweep about twice as fast as 72 whole forwards. And the
    knock-outs of one layer go through together, a copy of the batch each (up to SWEEP_ROWS sentences a forward):
    copy i has its own head replaced and the other heads' outputs put back as the clean run computed them (the same
    input gives the same outputs), so each copy is its own knock-out. Larger products: a quarter less CPU than one
    knock-out a forward."""
    check_kind(kind)
    if kind == "mean" and means is None:
        raise AttnvizError("Mean-ablation needs the heads' mean outputs over a corpus (mean_head_outputs).")
    run = clean_run(model, batch.ids, batch.mask)
    clean = mean_pooled(run.hidden, batch.real)  # (B, C)
    L, H = model.n_layers, model.n_heads
    B = batch.ids.shape[0]
    per_pass = max(1, min(H, SWEEP_ROWS // B))
    values = torch.zeros(L, H)
    done = 0
    for layer in range(L):
        computed = run.traces[layer].head_outputs  # (B, nh, T, hs): every head's output, as the clean run made it
        for first in range(0, H, per_pass):
            heads = list(range(first, min(first + per_pass, H)))
            n = len(heads)
            outputs = computed[:, heads].repeat(n, 1, 1, 1)  # (n·B, n, T, hs): copy i of the batch is rows i·B ..
            for i, head in enumerate(heads):  # ... with head `heads[i]` knocked out in it
                outputs[i * B:(i + 1) * B, i] = 0.0 if kind == "zero" else means[layer, head].to(outputs)
            with torch.inference_mode():
                hidden, _, _ = model.forward(batch.ids.repeat(n, 1).to(model.device), _repeated(batch.mask, n, B), True,
                                             False, head_ablation={layer: (heads, outputs)},
                                             resume=(layer, run.traces[layer].x_in.repeat(n, 1, 1)))
            pooled = mean_pooled(hidden, batch.real.repeat(n, 1))  # (n·B, C)
            cos = torch.nn.functional.cosine_similarity(pooled, clean.repeat(n, 1), dim=-1)  # (n·B,)
            values[layer, heads] = (1 - cos.view(n, B).mean(dim=1)).float().cpu()
            done += n
            if progress:
                progress(done / (L * H))
    return values


def _repeated(mask, n: int, rows: int):
    """A batch's mask for n copies of its `rows` rows, one after another (one without a batch dimension, or None,
    serves every copy as it is)."""
    if mask is None or mask.dim() < 3 or mask.shape[0] != rows:
        return mask
    return mask.repeat(n, *([1] * (mask.dim() - 1)))
