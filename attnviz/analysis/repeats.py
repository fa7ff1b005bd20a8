"""Repeated random-word sequences, [BOS] A A (A = distinct random whole words), for a causal model: the first copy
cannot be predicted, the second can by looking back (induction). Used by the induction lesson's probe and by the
ablation outcome on the repeated half (ablation_effects.repeated_half_loss).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError


@dataclass(frozen=True)
class RepeatedBatch:
    ids: torch.Tensor  # (N, first + 2·half) token ids
    half: int  # P: words in the repeated block
    first: int  # position of the first copy's first word (after the leading specials)

    @property
    def second_copy_targets(self) -> slice:
        """Positions p whose next-token loss is scored on the repeated half: p predicts p + 1, for p + 1 in
        first + P + 1 .. first + 2P - 1 (the second copy's first word cannot be known from before it)."""
        return slice(self.first + self.half, self.first + 2 * self.half - 1)


def leading_specials(model) -> list[int]:
    """The ids the tokenizer puts in front of any text ([BOS] for the tiny Llama; none for GPT-2)."""
    enc = model.encode("the")
    lead = []
    for i, t in zip(enc.ids, enc.tokens, strict=True):
        if t not in model.tokenizer.special:
            break
        lead.append(i)
    return lead


def word_ids(model) -> list[int]:
    """Ids of whole-word tokens (letters only, any leading-space marker stripped), sorted: the random words."""
    vocab = model.tokenizer.backend.get_vocab()
    special = model.tokenizer.special
    words = [i for t, i in vocab.items() if t not in special and re.fullmatch(r"(Ġ|▁)?[a-z]{2,}", t)]
    return sorted(words)


def repeated_random_batch(model, n_seqs: int = 64, half: int = 20, seed: int = 0) -> RepeatedBatch:
    """n_seqs seeded sequences: leading specials, `half` distinct random words, the same words again."""
    lead, words = leading_specials(model), word_ids(model)
    if n_seqs < 1 or half < 2 or len(words) < half:
        raise AttnvizError(f"A repeated batch needs at least one sequence and a block of 2 to {len(words)} words "
                           f"(not {n_seqs} sequences of {half}).")
    if len(lead) + 2 * half > model.max_tokens:
        raise AttnvizError(f"A block of {half} words twice is more than {model.name} takes ({model.max_tokens}).")
    gen = torch.Generator().manual_seed(int(seed))
    rows = []
    for _ in range(n_seqs):
        block = [words[i] for i in torch.randperm(len(words), generator=gen)[:half].tolist()]
        rows.append(lead + block + block)
    return RepeatedBatch(torch.tensor(rows), half, len(lead))  # ids (N, first + 2·half)
