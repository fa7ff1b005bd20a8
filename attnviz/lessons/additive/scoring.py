"""Additive (Bahdanau) attention beside scaled dot-product attention, on the same queries and keys.

    additive:     e_ij = vᵀ tanh(W q_i + U k_j)        W (d_a, d_q), U (d_a, d_k), v (d_a,)
    dot-product:  s_ij = q_i · k_j / √d_k
Both then take a softmax over the keys j and a weighted sum of the values. Additive scoring passes every
(query, key) pair through a small one-hidden-layer network, so it materialises an (n_q, n_k, d_a) tensor;
dot-product needs one matmul and an (n_q, n_k) matrix.
Shapes: n_q queries, n_k keys, d = d_q = d_k, d_a the additive network's hidden width.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import torch

from attnviz.engine.attention import check_mask, check_qkv, masked_softmax, scaled_dot_product_attention
from attnviz.errors import AttnvizError

MAX_N = 64  # tokens in the side-by-side demo
MAX_D = 256  # query/key width
MAX_D_A = 256  # additive hidden width
MAX_STEPS = 2000


@dataclass
class AdditiveWeights:
    W: torch.Tensor  # (d_a, d_q) applied to each query
    U: torch.Tensor  # (d_a, d_k) applied to each key
    v: torch.Tensor  # (d_a,) reads the tanh layer out into one score
    how: str  # "fixed, seeded" or "fitted to the dot-product pattern"

    @property
    def d_a(self) -> int:
        return self.v.shape[0]


def _check_range(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AttnvizError(f"{name} must be a whole number between {low} and {high} (got {value!r}).")


def random_qkv(n: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q, K, V (n, d) each, entries from N(0, 1), reproducible from the seed."""
    _check_range("n (tokens)", n, 1, MAX_N)
    _check_range("d (query/key width)", d, 1, MAX_D)
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(n, d, generator=g) for _ in range(3))


def seeded_additive_weights(d_q: int, d_k: int, d_a: int, seed: int = 0) -> AdditiveWeights:
    """W, U, v from N(0, σ²), σ chosen so that W q + U k stays in tanh's bend for N(0, 1) inputs and the scores
    come out of order 1, like scaled dot products."""
    _check_range("d_a (additive hidden width)", d_a, 1, MAX_D_A)
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(d_a, d_q, generator=g) * (2 * d_q) ** -0.5  # two terms add: 1/(2d) each keeps Var(Wq + Uk) ≈ 1
    U = torch.randn(d_a, d_k, generator=g) * (2 * d_k) ** -0.5
    v = torch.randn(d_a, generator=g) * 2 * d_a**-0.5  # Σ of d_a terms of tanh (|·| < 1): std of order 1
    return AdditiveWeights(W, U, v, "fixed, seeded")


def additive_hidden(q: torch.Tensor, k: torch.Tensor, w: AdditiveWeights) -> torch.Tensor:
    """tanh(W q_i + U k_j) for every pair: (..., n_q, n_k, d_a), the tensor dot-product attention never builds."""
    wq = q @ w.W.T  # W q_i for every query                    (..., n_q, d_a)
    uk = k @ w.U.T  # U k_j for every key                      (..., n_k, d_a)
    return torch.tanh(wq.unsqueeze(-2) + uk.unsqueeze(-3))  # (..., n_q, n_k, d_a)


def additive_scores(q: torch.Tensor, k: torch.Tensor, w: AdditiveWeights) -> torch.Tensor:
    """e_ij = vᵀ tanh(W q_i + U k_j): (..., n_q, n_k)."""
    if q.shape[-1] != w.W.shape[1] or k.shape[-1] != w.U.shape[1]:
        raise AttnvizError(f"W expects queries of width {w.W.shape[1]} and U keys of width {w.U.shape[1]}; "
                           f"got {q.shape[-1]} and {k.shape[-1]}.")
    return additive_hidden(q, k, w) @ w.v  # (..., n_q, n_k)


def additive_attention(q, k, v, w: AdditiveWeights, mask: torch.Tensor | None = None):
    """(output (..., n_q, d_v), weights (..., n_q, n_k)) of softmax_j(e_ij + M) V.

    mask: bool, True = may attend, as in attnviz.engine.attention; a fully masked row gets zeros.
    """
    check_qkv(q, k, v)
    mask = check_mask(mask, q.shape[-2], k.shape[-2])
    weights = masked_softmax(additive_scores(q, k, w), mask)  # (..., n_q, n_k)
    return weights @ v, weights


def dot_product_attention(q, k, v, mask: torch.Tensor | None = None):
    """(output, weights) of softmax(q kᵀ / √d_k + M) V: the engine's own scaled dot-product attention."""
    return scaled_dot_product_attention(q, k, v, mask=mask, scale=True)


@contextmanager
def one_thread():
    """Run tiny tensor work on one CPU thread: for (n, n, d_a) tensors of a few thousand floats, extra threads
    only wait on each other (a 300-step fit took 20 s on two busy cores with two threads, 0.5 s with one)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Fit:
    weights: AdditiveWeights
    losses: list[float]  # KL(dot-product ‖ additive) per row, averaged, at each step (the first before any update)


def fit_additive_to_dot_product(q: torch.Tensor, k: torch.Tensor, d_a: int, steps: int = 300, lr: float = 0.05,
                                seed: int = 0, mask: torch.Tensor | None = None) -> Fit:
    """Adam on W, U, v so that softmax(additive scores) imitates softmax(q kᵀ/√d): "learn to agree".

    Loss: the mean over query rows of KL(p_dot ‖ p_add) = Σ_j p_dot log(p_dot / p_add).
    """
    _check_range("steps", steps, 1, MAX_STEPS)
    start = seeded_additive_weights(q.shape[-1], k.shape[-1], d_a, seed)
    mask = check_mask(mask, q.shape[-2], k.shape[-2])
    q, k = q.detach().float(), k.detach().float()
    target = dot_product_attention(q, k, k, mask)[1]  # (n_q, n_k), held fixed
    params = [start.W.clone().requires_grad_(), start.U.clone().requires_grad_(), start.v.clone().requires_grad_()]
    opt = torch.optim.Adam(params, lr=lr)
    losses = []
    with torch.enable_grad(), one_thread():  # enable_grad: pages may run us inside inference mode
        for step in range(steps + 1):
            e = additive_scores(q, k, AdditiveWeights(*params, "fitting"))  # (n_q, n_k)
            if mask is not None:
                e = e.masked_fill(~mask, float("-inf"))
            log_p = torch.log_softmax(e, dim=-1).nan_to_num(0.0, neginf=0.0)  # masked keys: p_dot = 0, no term
            kl = (target * (torch.log(target.clamp_min(1e-30)) - log_p)).sum(-1).mean()
            losses.append(float(kl.detach()))
            if step == steps:
                break
            opt.zero_grad()
            kl.backward()
            opt.step()
    W, U, v = (p.detach() for p in params)
    return Fit(AdditiveWeights(W, U, v, "fitted to the dot-product pattern"), losses)


def head_queries_keys(res, layer: int, head: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A kept run's layer-L head-h Q, K, V, each (T, d_head): the model's own projections of the text."""
    if res.traces is None:
        raise AttnvizError("This run kept no intermediates: run the model with keep=True.")
    if not 0 <= layer < len(res.traces) or not 0 <= head < res.traces[layer].q.shape[1]:
        raise AttnvizError(f"There is no layer {layer} head {head} in this model.")
    t = res.traces[layer]
    kv = head * t.k.shape[1] // t.q.shape[1]  # grouped-query models: this query head's shared K/V head
    return t.q[0, head], t.k[0, kv], t.v[0, kv]  # each (T, hs)


@dataclass
class Comparison:
    """Both scorings of the same q, k, v: what the page draws, all (n_q, n_k)."""

    additive_scores: torch.Tensor  # e_ij = vᵀ tanh(W q_i + U k_j)
    dot_scores: torch.Tensor  # s_ij = q_i · k_j / √d_k (before any mask)
    additive_weights: torch.Tensor  # softmax_j(e_ij + M)
    dot_weights: torch.Tensor  # softmax_j(s_ij + M)

    @property
    def difference(self) -> torch.Tensor:
        """|additive − dot-product| weights (n_q, n_k)."""
        return (self.additive_weights - self.dot_weights).abs()


def compare_scorings(q, k, v, w: AdditiveWeights, mask: torch.Tensor | None = None) -> Comparison:
    """Additive and scaled dot-product attention on the same q, k, v (and mask), side by side."""
    _, a_add = additive_attention(q, k, v, w, mask)
    _, a_dot = dot_product_attention(q, k, v, mask)
    dot = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5  # (..., n_q, n_k)
    return Comparison(additive_scores(q, k, w), dot, a_add, a_dot)
