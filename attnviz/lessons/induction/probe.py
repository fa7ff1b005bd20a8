"""The induction-heads lesson: run a causal model on a block of tokens repeated twice and score its heads.

On [BOS] A A (A = random words) the first copy of A cannot be predicted, the second can: a model
with induction heads finds, for the current token, where it appeared before and copies the token
that followed. The probe keeps the attentions (layers, heads, n, n), the previous-token and
induction scores per layer × head, and the model's loss on every token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.analysis.head_scores import best_head, induction_scores, per_token_loss, previous_token_scores
from attnviz.analysis.repeats import leading_specials, word_ids
from attnviz.errors import AttnvizError

HALF_RANGE = (4, 60)  # words in the repeated block the page offers


@dataclass
class InductionProbe:
    ids: list[int]
    labels: list[str]
    period: int  # P: tokens in the repeated block A
    first: int  # position of A's first token (after [BOS], if the model has one)
    attentions: torch.Tensor  # (L, H, n, n) weights after softmax
    previous: torch.Tensor  # (L, H) previous-token scores
    induction: torch.Tensor  # (L, H) induction scores
    loss: torch.Tensor  # (n - 1,) loss[p] = -log p(token p+1 | tokens 0..p), nats
    vocab_size: int = 0  # V, the tokens the model chooses among: uniform guessing scores ln V nats
    seen_mass: torch.Tensor | None = None  # (n - 1,) seen_mass[p] = probability on tokens among 0..p (already seen)

    @property
    def best_previous(self) -> tuple[int, int]:
        return best_head(self.previous)

    @property
    def best_induction(self) -> tuple[int, int]:
        return best_head(self.induction)

    def copy_losses(self) -> tuple[float, float]:
        """Mean loss on tokens 2..P of the first copy and of the second copy (the first token of each copy
        cannot be known from what precedes it)."""
        P, f = self.period, self.first
        first = self.loss[f: f + P - 1]  # predicting positions f+1 .. f+P-1
        second = self.loss[f + P: f + 2 * P - 1]  # predicting positions f+P+1 .. f+2P-1
        return float(first.mean()), float(second.mean())

    @property
    def chance_loss(self) -> float:
        """ln V: the loss of a uniform guess over the whole vocabulary, at every position."""
        return math.log(self.vocab_size)

    def first_copy_seen_mass(self) -> float:
        """Mean probability the model puts on tokens already seen, over the first copy's predictions (tokens
        2..P, as copy_losses): in a block of distinct random words every such bet is wrong."""
        P, f = self.period, self.first
        return float(self.seen_mass[f: f + P - 1].mean())


def require_language_model(model) -> None:
    if not model.cfg.causal or model.lm_head is None:
        raise AttnvizError(f"{model.name} is not a causal language model, so it has no next-token loss and no induction "
                           f"to find. Pick a causal model: tiny-llama (attnviz's own, offline) or GPT-2.")


def random_repeated_ids(model, half: int, seed: int) -> tuple[list[int], int]:
    """(ids, first): leading specials, then `half` distinct random words, then the same words again."""
    if not HALF_RANGE[0] <= half <= HALF_RANGE[1]:
        raise AttnvizError(f"The repeated block has {HALF_RANGE[0]} to {HALF_RANGE[1]} words, not {half}.")
    lead, words = leading_specials(model), word_ids(model)
    if len(words) < half:
        raise AttnvizError(f"{model.name}'s vocabulary has only {len(words)} whole words: too few for {half}.")
    gen = torch.Generator().manual_seed(int(seed))
    pick = torch.randperm(len(words), generator=gen)[:half].tolist()
    block = [words[i] for i in pick]
    return check_length(model, lead + block + block), len(lead)


def text_twice_ids(model, text: str) -> tuple[list[int], int, int]:
    """(ids, period, first) for the user's text written twice: its tokens (without specials) repeated."""
    enc = model.encode(text)
    lead = leading_specials(model)
    body = [i for i, t in zip(enc.ids, enc.tokens, strict=True) if t not in model.tokenizer.special]
    if len(body) < 2:
        raise AttnvizError("Type at least two words: the text is repeated to look for induction.")
    return check_length(model, lead + body + body), len(body), len(lead)


def check_length(model, ids: list[int]) -> list[int]:
    if len(ids) > model.max_tokens:
        raise AttnvizError(f"Repeated, the text is {len(ids)} tokens: more than {model.name} takes "
                           f"({model.max_tokens}). Use a shorter text.")
    return ids


def probe(model, ids: list[int], period: int, first: int) -> InductionProbe:
    """Run the model once on ids; score every head and every token's loss."""
    require_language_model(model)
    x = torch.tensor([ids], device=model.device)  # (1, n)
    with torch.inference_mode():
        hidden, weights, _ = model.forward(x, None, True, False)  # the model's own (causal) mask
        logits = model.logits(hidden[0])  # (n, V)
    attentions = torch.stack([w[0] for w in weights]).float().cpu()  # (L, H, n, n)
    labels = [model.tokenizer.token_of(i)[1] for i in ids]
    return InductionProbe(
        ids=list(ids), labels=labels, period=period, first=first, attentions=attentions,
        previous=previous_token_scores(attentions), induction=induction_scores(attentions, period, first),
        loss=per_token_loss(logits.float().cpu(), ids), vocab_size=int(logits.shape[-1]),
        seen_mass=seen_token_mass(logits.float().cpu(), ids),
    )


def seen_token_mass(logits: torch.Tensor, ids: list[int]) -> torch.Tensor:
    """(n - 1,): at each position p, the probability the model gives to the tokens among ids[0..p]."""
    probs = logits[:-1].softmax(-1)  # (n - 1, V): position p predicts token p + 1
    seen = torch.zeros_like(probs, dtype=torch.bool)
    for p, token in enumerate(ids[:-1]):
        seen[p:, token] = True  # token p is seen from position p on
    return (probs * seen).sum(-1)


# The models attnviz trained with the loss on the repeated copies only (attnviz/training: labels -100 up to the
# second copy): their first copies were never scored in training.
TRAINED_ON_REPEATS_ONLY = {"attnviz-tiny-llama"}


def chance_sentence(model_name: str, p: InductionProbe) -> str:
    """The chance line of the loss chart in words, and, when the first copy is worse than chance, why."""
    first_loss, _ = p.copy_losses()
    text = (f"Dashed line: chance, ln {p.vocab_size:,} ≈ {p.chance_loss:.2f} nats, the loss of guessing uniformly "
            f"among the {p.vocab_size:,} tokens of the vocabulary.")
    if first_loss <= p.chance_loss:
        return text
    share = p.first_copy_seen_mass()
    text += (f" The first copy ({first_loss:.2f} nats) is worse than that: in it the model puts {share:.0%} of its "
             "probability, on average, on words it has already seen, and in a block of distinct random words the next "
             "word is never one of them.")
    if model_name in TRAINED_ON_REPEATS_ONLY:
        text += (f" {model_name} was trained with the loss on the repeated copies only, never on a first copy, so it "
                 "learned to bet on earlier words and nothing taught it otherwise.")
    return text
