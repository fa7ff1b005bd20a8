"""The 1/√d_k lesson: why attention divides its scores by √d_k, shown with numbers.

If q and k have d_k independent N(0, 1) entries, their dot product q·k = Σ_i q_i k_i is a sum of
d_k terms of mean 0 and variance 1, so Var(q·k) = d_k: its spread grows like √d_k. Softmax of
scores that far apart puts nearly all weight on the largest one (it saturates), its Jacobian goes
to zero, and the gradients that should train Q and K vanish. Dividing by √d_k brings the variance
back to 1 whatever d_k is.

Everything here is seeded and runs on the CPU in well under a second for d_k up to a few hundred.
Experiments return dataclasses of numpy arrays indexed like `d_k`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from attnviz.analysis.stats import head_entropy, row_entropy
from attnviz.errors import AttnvizError


def _check_d_k_values(d_k_values) -> list[int]:
    """The d_k values as a list of ints, or a clear error (a slider may hand us 64.0)."""
    try:
        values = list(d_k_values)
    except TypeError:
        raise AttnvizError(f"d_k values must be a list of whole numbers, got {d_k_values!r}.") from None
    if not values or not all(_is_whole(d) and d >= 1 for d in values):
        raise AttnvizError(f"d_k values must be positive whole numbers, got {values}.")
    return [int(d) for d in values]


def _is_whole(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer()


def _check_count(name: str, value, low: int) -> int:
    if not _is_whole(value) or value < low:
        raise AttnvizError(f"{name} must be a whole number of at least {low}, got {value}.")
    return int(value)


# ---- (a) the variance of q·k ------------------------------------------------------------------


@dataclass
class VarianceExperiment:
    d_k: np.ndarray  # (D,) the key/query widths tried
    unscaled: np.ndarray  # (D, n_samples) samples of q·k
    scaled: np.ndarray  # (D, n_samples) samples of q·k / √d_k
    unscaled_variance: np.ndarray  # (D,) measured Var(q·k), theory: d_k
    scaled_variance: np.ndarray  # (D,) measured Var(q·k / √d_k), theory: 1

    @property
    def expected_unscaled_variance(self) -> np.ndarray:
        """Var(q·k) = Σ_i Var(q_i k_i) = d_k · 1, the line the measured points should follow."""
        return self.d_k.astype(np.float64)


VARIANCE_SAMPLES = 4000  # random pairs q, k per d_k: the Scaling lab's, its lecture question's and its quantity's


def dot_product_variance_experiment(d_k_values, n_samples: int = VARIANCE_SAMPLES, seed: int = 0) -> VarianceExperiment:
    """Draw q, k ~ N(0, I_{d_k}) n_samples times per d_k and measure Var(q·k) and Var(q·k / √d_k)."""
    d_ks = _check_d_k_values(d_k_values)
    n_samples = _check_count("n_samples", n_samples, 2)
    g = torch.Generator().manual_seed(int(seed))
    unscaled, scaled = [], []
    for d_k in d_ks:
        q = torch.randn(n_samples, d_k, generator=g, dtype=torch.float64)  # (S, d_k)
        k = torch.randn(n_samples, d_k, generator=g, dtype=torch.float64)  # (S, d_k)
        dots = (q * k).sum(-1)  # q·k = Σ_i q_i k_i  (S,)
        unscaled.append(dots)
        scaled.append(dots / math.sqrt(d_k))  # q·k / √d_k  (S,)
    unscaled_np = torch.stack(unscaled).numpy()  # (D, S)
    scaled_np = torch.stack(scaled).numpy()  # (D, S)
    return VarianceExperiment(
        d_k=np.array(d_ks),
        unscaled=unscaled_np,
        scaled=scaled_np,
        unscaled_variance=unscaled_np.var(axis=1, ddof=1),
        scaled_variance=scaled_np.var(axis=1, ddof=1),
    )


# ---- (b) softmax saturation -------------------------------------------------------------------


def _random_scores(d_k: int, n_keys: int, n_trials: int, generator: torch.Generator) -> torch.Tensor:
    """One query against n_keys keys, all N(0, I_{d_k}), n_trials times: rows of q·k_j (T, n_keys)."""
    q = torch.randn(n_trials, 1, d_k, generator=generator, dtype=torch.float64)  # (T, 1, d_k)
    k = torch.randn(n_trials, n_keys, d_k, generator=generator, dtype=torch.float64)  # (T, n_keys, d_k)
    return (q * k).sum(-1)  # s_j = q·k_j  (T, n_keys)


@dataclass
class SaturationExperiment:
    d_k: np.ndarray  # (D,)
    n_keys: int
    entropy_unscaled: np.ndarray  # (D,) mean H(softmax(q·k)), nats
    entropy_scaled: np.ndarray  # (D,) mean H(softmax(q·k / √d_k)), nats
    max_weight_unscaled: np.ndarray  # (D,) mean largest weight of softmax(q·k)
    max_weight_scaled: np.ndarray  # (D,) mean largest weight of softmax(q·k / √d_k)

    @property
    def max_entropy(self) -> float:
        """log(n_keys): the entropy of a uniform row, the ceiling of every entropy here."""
        return math.log(self.n_keys)


def softmax_saturation(d_k_values, n_keys: int = 16, n_trials: int = 200, seed: int = 0) -> SaturationExperiment:
    """Mean entropy and max weight of a = softmax(s) and of softmax(s / √d_k), s_j = q·k_j, per d_k.

    Unscaled, the entropy falls toward 0 and the max weight rises toward 1 as d_k grows (one key
    takes everything); scaled, both stay where they are for every d_k.
    """
    d_ks = _check_d_k_values(d_k_values)
    n_keys = _check_count("n_keys", n_keys, 1)
    n_trials = _check_count("n_trials", n_trials, 1)
    g = torch.Generator().manual_seed(int(seed))
    rows = {"entropy_unscaled": [], "entropy_scaled": [], "max_weight_unscaled": [], "max_weight_scaled": []}
    for d_k in d_ks:
        scores = _random_scores(d_k, n_keys, n_trials, g)  # (T, n_keys)
        for label, factor in (("unscaled", 1.0), ("scaled", 1.0 / math.sqrt(d_k))):
            weights = torch.softmax(scores * factor, dim=-1)  # (T, n_keys)
            rows[f"entropy_{label}"].append(float(row_entropy(weights).mean()))
            rows[f"max_weight_{label}"].append(float(weights.amax(-1).mean()))
    return SaturationExperiment(d_k=np.array(d_ks), n_keys=n_keys, **{k: np.array(v) for k, v in rows.items()})


# ---- (c) the softmax Jacobian: why saturation stalls training -------------------------------------


def softmax_jacobian(scores: torch.Tensor) -> torch.Tensor:
    """∂a_i/∂s_j of a = softmax(s):  J = diag(a) - a aᵀ,  (..., n) -> (..., n, n).

    J_ii = a_i (1 - a_i), J_ij = -a_i a_j. A one-hot a makes every entry 0: no gradient flows.
    """
    a = torch.softmax(scores, dim=-1)  # (..., n)
    return torch.diag_embed(a) - a.unsqueeze(-1) * a.unsqueeze(-2)  # (..., n, n)


def softmax_jacobian_norm(scores: torch.Tensor) -> torch.Tensor:
    """‖J‖_F = sqrt(Σ_ij J_ij²) of softmax at the score vector(s): (..., n) -> (...).

    At most 1/2 (two keys splitting the weight evenly); about 0 when one key takes everything.
    """
    return softmax_jacobian(scores).pow(2).sum((-2, -1)).sqrt()


@dataclass
class GradientExperiment:
    d_k: np.ndarray  # (D,)
    jacobian_norm_unscaled: np.ndarray  # (D,) mean ‖J‖_F of softmax at s = q·k
    jacobian_norm_scaled: np.ndarray  # (D,) mean ‖J‖_F of softmax at s = q·k / √d_k


def gradient_experiment(d_k_values, n_keys: int = 16, n_trials: int = 200, seed: int = 0) -> GradientExperiment:
    """Mean Frobenius norm of the softmax Jacobian at random score rows, with and without 1/√d_k.

    Unscaled, the norm collapses toward 0 as d_k grows: the gradient reaching Q and K through the
    softmax is multiplied by J, so a saturated softmax passes almost nothing back and learning stalls.
    (Differentiating softmax(s / √d_k) by s adds a constant 1/√d_k; we measure J itself, the part
    that saturation destroys.)
    """
    d_ks = _check_d_k_values(d_k_values)
    n_keys = _check_count("n_keys", n_keys, 1)
    n_trials = _check_count("n_trials", n_trials, 1)
    g = torch.Generator().manual_seed(int(seed))
    unscaled, scaled = [], []
    for d_k in d_ks:
        scores = _random_scores(d_k, n_keys, n_trials, g)  # (T, n_keys)
        unscaled.append(float(softmax_jacobian_norm(scores).mean()))
        scaled.append(float(softmax_jacobian_norm(scores / math.sqrt(d_k)).mean()))
    return GradientExperiment(d_k=np.array(d_ks), jacobian_norm_unscaled=np.array(unscaled),
                              jacobian_norm_scaled=np.array(scaled))


# ---- (d) a real model under another scale factor ----------------------------------------------


def entropy_per_layer(attentions: torch.Tensor) -> torch.Tensor:
    """Mean row entropy over heads and live rows per layer, nats: (L, H, n, n) -> (L,).

    Run the model with scale = 1/√d_k, 1, or anything between, and watch this curve: a larger factor
    sharpens every softmax, and the change feeds forward into the later layers.
    """
    if not isinstance(attentions, torch.Tensor) or attentions.dim() != 4:
        shape = tuple(attentions.shape) if isinstance(attentions, torch.Tensor) else type(attentions).__name__
        raise AttnvizError(f"Expected attentions of shape (layers, heads, n, n), got {shape}.")
    return head_entropy(attentions).mean(-1)  # (L, H) -> (L,): every head has the same live rows
