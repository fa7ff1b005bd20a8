"""Why attention: the fixed-size vector between an RNN encoder and its decoder, and what attention changes.

Two GRU encoder–decoders trained the same way on numbers in words -> digits (attnviz/engine/gru_seq2seq.py):
    attnviz-gru-bottleneck   the decoder sees the source only through z = [→h_S ; ←h_1] (2·64 = 128 numbers)
    attnviz-gru-attention    each output step i reads c_i = Σ_j α_ij h_j over every source annotation
What a page calls:
    accuracy_against_length()  exact match per source-length bin, both models, on seeded held-out numbers
    alignment(text)            the attention model's α (output step × source token) and both models' answers
    sentences(...)             short true sentences about those figures
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

from attnviz.engine.gru_seq2seq import Translation, load_gru_model
from attnviz.tasks.accuracy import LENGTH_BINS, LengthAccuracy, accuracy_by_length
from attnviz.tasks.number_words import MAX_VALUE, ONES, TENS, held_out_examples, number_to_words

BOTTLENECK, ATTENTION = "attnviz-gru-bottleneck", "attnviz-gru-attention"
LESSON_SEED = 20_000  # the lesson's held-out set (training.json's figures use another seed, 10_000)
LESSON_N = 2000


@dataclass(frozen=True)
class LengthCurve:
    """Exact match against source length for both models, on the same held-out examples."""

    bins: list[str]  # "1–10", "11–20", ...: source words (separators included)
    n: list[int]  # held-out examples per bin
    bottleneck: list[float]  # exact-match accuracy per bin, 0..1
    attention: list[float]
    seed: int
    size: int  # held-out examples in all

    def as_payload(self) -> dict:
        """Plain lists for a chart (x: bins, one line per model)."""
        return {"x": self.bins, "n": self.n, "lines": {"fixed-size vector": self.bottleneck,
                                                       "additive attention": self.attention},
                "x_title": "source length (words)", "y_title": "exact match on held-out numbers"}


@dataclass(frozen=True)
class Alignment:
    """Both models' answers for one source, and where the attention model looked at each output step."""

    source_labels: list[str]  # <s> words </s>: the columns
    output_labels: list[str]  # the attention model's output tokens: the rows
    weights: torch.Tensor  # (n_output, n_source) α_ij, rows sum to 1
    attention_answer: str  # '342007, 90'
    bottleneck_answer: str
    expected: str | None  # the right digits when the text is a number sentence the task can write, else None

    def as_payload(self) -> dict:
        return {"rows": self.output_labels, "cols": self.source_labels, "values": self.weights.tolist(),
                "kind": "weights", "y_title": "output step (digit written)", "x_title": "source word (annotation h_j)"}


def models():
    """(bottleneck, attention): the shipped GRU models, SHA-256 checked, loaded once."""
    return load_gru_model(BOTTLENECK), load_gru_model(ATTENTION)


@lru_cache(maxsize=2)
def accuracy_against_length(n: int = LESSON_N, seed: int = LESSON_SEED) -> LengthCurve:
    """Exact match per source-length bin for both models on n seeded held-out examples (a few seconds; cached)."""
    examples = held_out_examples(n, seed)
    bottleneck, attention = (accuracy_by_length(m, examples) for m in models())

    def acc(rows: list[LengthAccuracy]) -> list[float]:
        return [round(r.accuracy, 4) for r in rows]

    return LengthCurve([r.label for r in bottleneck], [r.n for r in bottleneck], acc(bottleneck), acc(attention),
                       seed, n)


def alignment(text: str) -> Alignment:
    """The attention model's alignment matrix for `text` (numbers in words, commas between numbers)."""
    bottleneck, attention = models()
    att: Translation = attention.translate(text)
    bot: Translation = bottleneck.translate(text)
    return Alignment(att.source_tokens, att.output_tokens, att.alignment, att.output_text, bot.output_text,
                     expected_digits(text))


def expected_digits(text: str) -> str | None:
    """The right answer for a source written the way the task writes numbers, else None (then no verdict)."""
    words = " ".join(text.lower().replace("-", " ").replace(",", " , ").split())
    numbers = []
    for part in words.split(" , "):
        value = _parse(part.strip())
        if value is None or number_to_words(value) != part.strip() or value > MAX_VALUE:
            return None
        numbers.append(value)
    return ", ".join(str(v) for v in numbers)


def _parse(words: str) -> int | None:
    total, group = 0, 0
    for w in words.split():
        if w in ONES:
            group += ONES.index(w)
        elif w in TENS[2:]:
            group += 10 * TENS.index(w)
        elif w == "hundred":
            group *= 100
        elif w in ("thousand", "million"):
            total += group * (1000 if w == "thousand" else 10**6)
            group = 0
        else:
            return None
    return total + group


def sentences(curve: LengthCurve) -> list[str]:
    """Short true sentences about the measured curve (figures read from it, never typed in)."""
    pct = lambda v: f"{100 * v:.1f}%"
    first, last = 0, len(curve.bins) - 1
    bottleneck, attention = models()
    n_base = sum(t.numel() for t in bottleneck.w.values())
    n_scoring = sum(t.numel() for k, t in attention.w.items() if k.startswith("attn_"))
    width = bottleneck.w["init.weight"].shape[1]  # z's width: 2·d_enc
    every_bin = [f"{pct(v)} ({b})" for v, b in zip(curve.attention, curve.bins, strict=True)]
    listed = ", ".join(every_bin[:-1]) + " and " + every_bin[-1] if len(every_bin) > 1 else every_bin[0]
    return [
        f"On {curve.size:,} held-out number sentences that neither model saw in training, the model with one "
        f"fixed-size vector writes {pct(curve.bottleneck[first])} of the shortest ({curve.bins[first]} words and "
        f"commas) exactly right, and {pct(curve.bottleneck[last])} of the longest ({curve.bins[last]}).",
        f"The attention model writes {listed} exactly right, bin by bin: the same encoder, decoder and training, "
        f"plus a small scoring network ({n_scoring:,} weights on top of {n_base:,}).",
        "The difference: at each output step the attention model reads a weighted average of every source word's "
        f"annotation; the other must carry the whole source in one vector of {width} numbers, however long it is.",
    ]


__all__ = ["LENGTH_BINS", "Alignment", "LengthCurve", "accuracy_against_length", "alignment", "models", "sentences"]
