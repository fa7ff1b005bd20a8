"""Exact-match accuracy of a GRU encoder–decoder on held-out numbers, grouped by source length.

An answer counts as right only when every output token is right and it stops where the target stops.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.tasks.number_words import Example, pad_batch

LENGTH_BINS = ((1, 8), (9, 16), (17, 24), (25, 45))  # source words, both ends included


@dataclass(frozen=True)
class LengthAccuracy:
    low: int  # source words, first of the bin
    high: int  # last of the bin
    n: int  # held-out examples in the bin
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    @property
    def label(self) -> str:
        return f"{self.low}–{self.high}"


def exact_matches(model, examples: list[Example], batch: int = 256) -> list[bool]:
    """Greedy-decode every example's source with a GRUSeq2Seq; True where the output equals the target exactly."""
    tok = model.tokenizer
    hits = []
    for start in range(0, len(examples), batch):
        chunk = examples[start:start + batch]
        src = [e.ids for e in tok.encode_batch([ex.source for ex in chunk])]
        tgt = [e.ids[1:] for e in tok.encode_batch([ex.target for ex in chunk])]  # digits ... </s>
        ids, lengths = pad_batch(src)
        out, _ = model.greedy(ids, lengths, max_len=max(len(t) for t in tgt) + 1)
        for row, want in zip(out.tolist(), tgt, strict=True):
            hits.append(row[:len(want)] == want)  # want ends in </s>: the output must stop there too
    return hits


def accuracy_by_length(model, examples: list[Example], bins=LENGTH_BINS) -> list[LengthAccuracy]:
    """Exact-match accuracy per source-length bin (source length in words, separators included)."""
    hits = exact_matches(model, examples)
    out = []
    for low, high in bins:
        inside = [h for ex, h in zip(examples, hits, strict=True) if low <= ex.n_words <= high]
        out.append(LengthAccuracy(low, high, len(inside), sum(inside)))
    return out
