"""Compare two attention patterns cell by cell: the same head under two settings (mask on/off,
scaling on/off) or two runs of the same text. Patterns are (query_pos, key_pos), rows sum to 1
(or are all zero for a fully masked query).

Every "change" here is a minus b, the same way round as `difference`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from attnviz.analysis.stats import head_entropy, head_max_weight, live_rows, row_kl_divergence
from attnviz.errors import AttnvizError

if TYPE_CHECKING:
    from attnviz.engine.models.model import RunResult


@dataclass
class PatternComparison:
    """What changed between pattern a and pattern b, both (n, n)."""

    difference: torch.Tensor  # a - b, cell by cell (n, n): > 0 where a attends more
    row_kl: torch.Tensor  # KL(a_i || b_i) per query row, nats (n,); +inf where b gives zero weight to a key a
    #                       uses; 0 for rows fully masked in a or b
    compared_rows: torch.Tensor  # bool (n,): rows that attend somewhere in both a and b
    entropy_a: float  # mean row entropy over live rows, nats
    entropy_b: float
    max_weight_a: float  # mean over live rows of the largest weight
    max_weight_b: float
    same_tokens: bool = True  # False: same length but other tokens, so cells line up by position only

    @property
    def entropy_change(self) -> float:
        """H(a) - H(b): > 0 means a spreads its weight more evenly than b."""
        return self.entropy_a - self.entropy_b

    @property
    def max_weight_change(self) -> float:
        """max(a) - max(b): > 0 means a is more peaked (closer to one-hot) than b."""
        return self.max_weight_a - self.max_weight_b

    def summary(self) -> dict[str, float]:
        """The headline numbers as plain floats, for st.metric or a table."""
        kl = self.row_kl[self.compared_rows]  # only rows that are distributions in both
        return {
            "entropy_a": self.entropy_a,
            "entropy_b": self.entropy_b,
            "entropy_change": self.entropy_change,
            "max_weight_a": self.max_weight_a,
            "max_weight_b": self.max_weight_b,
            "max_weight_change": self.max_weight_change,
            "max_abs_difference": float(self.difference.abs().max()) if self.difference.numel() else 0.0,
            "mean_abs_difference": float(self.difference.abs().mean()) if self.difference.numel() else 0.0,
            "mean_kl": float(kl.mean()) if kl.numel() else 0.0,  # +inf as soon as one compared row is infinite
            "max_kl": float(kl.max()) if kl.numel() else 0.0,
            "infinite_rows": float(torch.isinf(kl).sum()),  # how many compared rows are infinite
        }


def compare_patterns(a: torch.Tensor, b: torch.Tensor, same_tokens: bool = True) -> PatternComparison:
    """Difference a - b, entropy and max-weight change, and KL(a || b) per row of two (n, n) patterns."""
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2 or t.shape[0] != t.shape[1]:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise AttnvizError(f"Pattern {name} must be a square (n, n) tensor, got {shape}.")
    if a.shape != b.shape:
        raise AttnvizError(
            f"The two patterns have different sizes ({a.shape[0]}×{a.shape[1]} and {b.shape[0]}×{b.shape[1]}): "
            "a cell-by-cell comparison needs the same tokens."
        )
    a, b = a.float(), b.float()
    return PatternComparison(
        difference=a - b,  # (n, n)
        row_kl=row_kl_divergence(a, b),  # (n,)
        compared_rows=live_rows(a) & live_rows(b),  # (n,)
        entropy_a=float(head_entropy(a)),
        entropy_b=float(head_entropy(b)),
        max_weight_a=float(head_max_weight(a)),
        max_weight_b=float(head_max_weight(b)),
        same_tokens=same_tokens,
    )


def compare_results(res_a: RunResult, res_b: RunResult, layer: int, head: int) -> PatternComparison:
    """Compare head `head` of layer `layer` in two runs (a minus b).

    Raises AttnvizError when the runs have different numbers of tokens (cells would not line up) or
    the layer/head does not exist in one of them. Same length but different tokens is compared by
    position, with `same_tokens=False` so the page can warn.
    """
    n_a, n_b = len(res_a.tokens), len(res_b.tokens)
    if n_a != n_b:
        raise AttnvizError(
            f"The two runs have different numbers of tokens ({n_a} and {n_b}), so their attention cells do "
            "not line up. Compare texts that tokenize to the same length, or the same text under two settings."
        )
    pattern_a = _pick_head(res_a, layer, head, "first")
    pattern_b = _pick_head(res_b, layer, head, "second")
    return compare_patterns(pattern_a, pattern_b, same_tokens=list(res_a.tokens) == list(res_b.tokens))


def _pick_head(res: RunResult, layer: int, head: int, which: str) -> torch.Tensor:
    n_layers, n_heads = res.attentions.shape[:2]
    if not 0 <= layer < n_layers:
        raise AttnvizError(f"The {which} run has layers 0 to {n_layers - 1}; there is no layer {layer}.")
    if not 0 <= head < n_heads:
        raise AttnvizError(f"The {which} run has heads 0 to {n_heads - 1}; there is no head {head}.")
    return res.attentions[layer, head]  # (n, n)
