"""Does a head do what one picture suggests? A claim "head (l, h) looks from the query to the labelled key",
scored over every labelled query of a corpus, beside the baselines that could explain it away.

For each labelled item (sentence s, query q, keys K) and head (l, h), with A = the weights after softmax,
[batch, layer, head, query_pos, key_pos]:

    hit       argmax_j A[s, l, h, q, j] ∈ K            the labelled key is the head's most-weighted key
    weight    Σ_{k∈K} A[s, l, h, q, k]                 the weight on the labelled key(s)
    column    mean over the sentence's other real queries q' ≠ q of Σ_{k∈K} A[s, l, h, q', k]
              (the column effect: a head that looks at "animal" from everywhere also looks at it from "it")

A head's claim score is its hit rate and mean weight over the items; the baselines are every other head's, the
column effect's mean, and a positional rule that reads no weights at all (rule_hits).

    run = run_corpus(model, corpus)              # one batched forward over every sentence
    score = claim_score(run, "coreference", 5, 11)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.analysis.contribution import value_vector_norms
from attnviz.analysis.corpus import Corpus, Item, encode_corpus
from attnviz.errors import AttnvizError

RULES = {
    "coreference": "the nearest candidate noun before the pronoun",
    "verb_subject": "the token just before",
    "same_word": "the token just before",
    "previous_token": "the token just before (the relation itself: it scores 100% by definition)",
    "specials": "the token just before",
}


@dataclass(frozen=True)
class CorpusRun:
    """One forward of every sentence of a corpus, weights kept."""

    corpus: Corpus
    attentions: torch.Tensor  # (B, L, H, T, T) weights after softmax; padded keys get 0
    real: torch.Tensor  # (B, T) bool
    model_name: str
    # (B, L, H, T): ‖(x_j W_V + b_V) W_O^h‖ per key, when asked for (run_corpus(value_norms=True)); times the weights
    # it gives each key's contribution norm (contribution.py) without a second pass over the corpus
    value_norms: torch.Tensor | None = None


@dataclass(frozen=True)
class ItemScores:
    """Every head's scores on every item of one relation: (N items, L, H) each."""

    relation: str
    items: tuple[Item, ...]
    hits: torch.Tensor  # (N, L, H) bool: the labelled key is the most-weighted key
    weights: torch.Tensor  # (N, L, H) weight on the labelled key(s)
    columns: torch.Tensor  # (N, L, H) mean weight the labelled key(s) get from the sentence's other queries
    top_keys: torch.Tensor  # (N, L, H) the most-weighted key's position


@dataclass(frozen=True)
class ClaimScore:
    relation: str
    layer: int
    head: int
    n_items: int
    hit_rate: float  # share of items whose most-weighted key is labelled
    mean_weight: float  # mean weight on the labelled key(s)
    column_mean: float  # mean weight the labelled key(s) get from the other queries (the column effect)
    rank: int  # 1 = the best hit rate of all heads (ties broken by mean weight, then (layer, head))
    n_heads: int
    rule_hit_rate: float  # the positional rule's hit rate on the same items
    failing: tuple[int, ...]  # indices into the relation's items where the head's top key is not labelled
    # coreference: the hit rate when the antecedent is the farther candidate and when it is the nearer one; a head
    # that resolves the pronoun does well on both, one that always looks at the subject only on the first
    by_reading: dict[str, float] | None = None


def run_corpus(model, corpus: Corpus, batch_size: int = 512, value_norms: bool = False) -> CorpusRun:
    """Every sentence through the model in padded batches ([PAD] keys masked): the weights of every head.
    batch_size: sentences per forward; the shipped corpus (300 short sentences) goes in one, which was 1.5× faster
    on a 2-core CPU than batches of 64 (larger products). value_norms: also keep each key's ‖(x W_V + b_V) W_O^h‖
    (the same pass, its traces kept)."""
    batch = encode_corpus(model, corpus)
    chunks, norms = [], []
    with torch.inference_mode():
        for start in range(0, batch.ids.shape[0], batch_size):
            part = slice(start, start + batch_size)
            _, weights, traces = model.forward(batch.ids[part].to(model.device), batch.mask[part], True, value_norms)
            chunks.append(torch.stack(weights, dim=1).float().cpu())  # (b, L, H, T, T)
            if value_norms:
                norms.append(torch.stack([value_vector_norms(model, traces, layer).float().cpu()
                                          for layer in range(len(traces))], dim=1))  # (b, L, H, T)
    return CorpusRun(corpus, torch.cat(chunks), batch.real, model.name, torch.cat(norms) if value_norms else None)


def item_scores(run: CorpusRun, relation: str) -> ItemScores:
    """Hits, weights, column effects and top keys of every head on every item of the relation."""
    items = tuple(run.corpus.items(relation))
    A = run.attentions  # (B, L, H, T, T)
    B, L, H, T, _ = A.shape
    s = torch.tensor([it.sentence for it in items])  # (N,)
    q = torch.tensor([it.query for it in items])  # (N,)
    labelled = torch.zeros(len(items), T, dtype=torch.bool)  # (N, T) the item's keys
    for n, it in enumerate(items):
        labelled[n, list(it.keys)] = True
    rows = A[s, :, :, q, :]  # (N, L, H, T): each item's query row in every head
    top = rows.argmax(dim=-1)  # (N, L, H)
    hits = labelled[:, None, None, :].expand(-1, L, H, -1).gather(-1, top[..., None])[..., 0]  # (N, L, H)
    on_label = labelled[:, None, None, :].float()  # (N, 1, 1, T)
    weights = (rows * on_label).sum(-1)  # (N, L, H)
    # column: Σ over real queries of the weight on the labelled keys, minus the item's own query, / (n_real - 1)
    real_q = run.real.float()[:, None, None, :, None]  # (B, 1, 1, T, 1)
    column_sums = (A * real_q).sum(dim=3)  # (B, L, H, T): each key's total weight from the real queries
    label_columns = (column_sums[s] * on_label).sum(-1)  # (N, L, H)
    others = (run.real[s].sum(-1) - 1).clamp_min(1).float()[:, None, None]  # (N, 1, 1)
    columns = (label_columns - weights) / others
    return ItemScores(relation, items, hits, weights, columns, top)


def rule_hits(scores: ItemScores) -> torch.Tensor:
    """(N,) bool: whether the relation's positional rule (RULES) picks a labelled key, reading no weights."""
    picks = []
    for it in scores.items:
        if scores.relation == "coreference":
            before = [c for c in it.candidates if c < it.query]
            picks.append(max(before) if before else -1)
        else:
            picks.append(it.query - 1)
    return torch.tensor([p in it.keys for p, it in zip(picks, scores.items, strict=True)])


def head_table(scores: ItemScores) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hit rate, mean weight, column mean), each (L, H): every head as a baseline for every other."""
    return scores.hits.float().mean(0), scores.weights.mean(0), scores.columns.mean(0)


def head_ranks(scores: ItemScores) -> list[tuple[int, int]]:
    """Every (layer, head), best first: by hit rate, then mean weight, then (layer, head)."""
    hit, weight, _ = head_table(scores)
    H = hit.shape[1]
    order = sorted(range(hit.numel()), key=lambda f: (-float(hit.flatten()[f]), -float(weight.flatten()[f]), f))
    return [divmod(f, H) for f in order]


def claim_score(run: CorpusRun, relation: str, layer: int, head: int, scores: ItemScores | None = None) -> ClaimScore:
    """The claim "(layer, head) looks from the query to the labelled key" over the corpus, with its baselines.
    scores: item_scores(run, relation) if already computed (the page computes them once for every head)."""
    L, H = run.attentions.shape[1:3]
    if not (isinstance(layer, int) and isinstance(head, int) and 0 <= layer < L and 0 <= head < H):
        raise AttnvizError(f"There is no layer {layer}, head {head}: layers are 0 to {L - 1}, heads 0 to {H - 1}.")
    scores = scores if scores is not None else item_scores(run, relation)
    hit, weight, column = head_table(scores)
    failing = (~scores.hits[:, layer, head]).nonzero().flatten().tolist()
    return ClaimScore(relation, layer, head, len(scores.items), float(hit[layer, head]), float(weight[layer, head]),
                      float(column[layer, head]), head_ranks(scores).index((layer, head)) + 1, L * H,
                      float(rule_hits(scores).float().mean()), tuple(failing), reading_split(scores, layer, head))


FARTHER, NEARER = "antecedent is the farther noun", "antecedent is the nearer noun"


def reading_split(scores: ItemScores, layer: int, head: int) -> dict[str, float] | None:
    """Coreference only: {FARTHER: hit rate, NEARER: hit rate} over the items of each reading (None otherwise)."""
    if scores.relation != "coreference":
        return None
    farther = torch.tensor([bool(it.candidates) and it.keys[0] == min(it.candidates) for it in scores.items])
    hits = scores.hits[:, layer, head].float()
    split = {}
    for name, chosen in ((FARTHER, farther), (NEARER, ~farther)):
        if chosen.any():
            split[name] = float(hits[chosen].mean())
    return split
