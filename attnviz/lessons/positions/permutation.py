"""The permutation demo: shuffle the words, run again, put the rows back, compare.

Self-attention treats its input as a set: permute the tokens with a permutation matrix P and
    softmax((PQ)(PK)ᵀ/√d) PV = P softmax(QKᵀ/√d) V,
so every output row moves with its token and nothing else changes (permutation equivariance).
Position information (added to the tokens or rotated into Q and K) and a causal mask are the only
things in a transformer that know the order; with them the un-shuffled rows differ.

Specials ([CLS], [SEP], <s> ...) stay where they are; only the words between them are shuffled.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError


@dataclass
class PermutationResult:
    model_name: str
    tokens: list[str]  # the original order
    shuffled_tokens: list[str]  # the order fed to the second run
    order: list[int]  # shuffled position r holds original token order[r]
    attentions: torch.Tensor  # original run (L, nh, T, T)
    attentions_back: torch.Tensor  # shuffled run with rows and columns put back in the original order
    hidden: torch.Tensor  # original run's final outputs (T, C)
    hidden_back: torch.Tensor  # shuffled run's outputs, rows put back
    has_positions: bool
    causal: bool

    @property
    def attention_difference(self) -> float:
        """max |A − Pᵀ A_shuffled P| over every layer, head, query and key."""
        return float((self.attentions - self.attentions_back).abs().max())

    @property
    def output_difference(self) -> float:
        """max |Y − Pᵀ Y_shuffled| over every token and feature of the last layer's output."""
        return float((self.hidden - self.hidden_back).abs().max())

    def head_difference(self, layer: int, head: int) -> torch.Tensor:
        """A − Pᵀ A_shuffled P for one head (T, T): ≈ 0 everywhere when the rows followed the shuffle."""
        return self.attentions[layer, head] - self.attentions_back[layer, head]

    def equivariant(self, tol: float = 1e-4) -> bool:
        return self.attention_difference < tol and self.output_difference < tol


def shuffle_order(tokens: list[str], specials: set[str], seed: int = 0) -> list[int]:
    """A seeded permutation that moves only non-special tokens and is never the identity."""
    movable = [i for i, t in enumerate(tokens) if t not in specials]
    if len(movable) < 2:
        raise AttnvizError("Shuffling needs at least two words: type a longer text.")
    g = torch.Generator().manual_seed(seed)
    picked = [movable[int(i)] for i in torch.randperm(len(movable), generator=g)]
    if picked == movable:  # the identity shows nothing: swap the first two
        picked[0], picked[1] = picked[1], picked[0]
    order = list(range(len(tokens)))
    for slot, source in zip(movable, picked, strict=True):
        order[slot] = source
    return order


def _specials(model) -> set[str]:
    return set(model.tokenizer.special)


def permutation_demo(model, text: str, seed: int = 0) -> PermutationResult:
    """Run the text, run it with its words shuffled, un-shuffle the second run and keep both for comparison."""
    enc = model.encode(text)
    order = shuffle_order(enc.tokens, _specials(model), seed)
    ids = torch.tensor([enc.ids], device=model.device)  # (1, T)
    with torch.inference_mode():  # each with the model's own mask (a decoder's causal one), as model.run
        hidden, weights, _ = model.forward(ids, None, True, keep=False)
        hidden_s, weights_s, _ = model.forward(ids[:, order], None, True, keep=False)
    back = torch.argsort(torch.tensor(order))  # original token t sits at shuffled position back[t]
    att = torch.stack([w[0] for w in weights]).float().cpu()  # (L, nh, T, T)
    att_s = torch.stack([w[0] for w in weights_s]).float().cpu()  # (L, nh, T, T)
    return PermutationResult(
        model_name=model.name, tokens=list(enc.tokens), shuffled_tokens=[enc.tokens[i] for i in order], order=order,
        attentions=att, attentions_back=att_s[:, :, back][:, :, :, back],  # rows, then columns, back in place
        hidden=hidden[0].float().cpu(), hidden_back=hidden_s[0].float().cpu()[back],
        has_positions=model.cfg.positions != "none",
        causal=bool(model.cfg.causal),
    )


def what_breaks_it(res: PermutationResult) -> str:
    """One plain sentence on why this model's rows did or did not follow the shuffle."""
    if not res.has_positions and not res.causal:
        return (f"{res.model_name} gives its tokens no positions and no causal mask: attention sees a set, so the "
                "shuffled run is the original run with its rows moved.")
    reasons = []
    if res.has_positions:
        reasons.append("a position signal that stays put while the words move")
    if res.causal:
        reasons.append("a causal mask, which lets each token see only the tokens before it")
    return f"{res.model_name} has " + " and ".join(reasons) + ", so the shuffled words get different results."
