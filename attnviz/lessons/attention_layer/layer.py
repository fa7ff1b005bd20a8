"""The four steps from one captioning query to a self-attention layer, each equation beside the code for it.

    a) one query     e_j = q·x_j / √D,            a = softmax(e),  y = Σ_j a_j x_j
    b) M queries     E = Q Xᵀ / √D        (M, N), A = softmax(E) row by row,  Y = A X        (M, D)
    c) keys, values  K = X W_K (N, D_k), V = X W_V (N, D_v), E = Q Kᵀ / √D_k,  Y = A V    (M, D_v)
    d) self-attention  Q = X W_Q: the regions make their own queries;  Y = softmax(Q Kᵀ / √D_k) V  (N, D_v)

W_K and W_V are written by hand, not learned (in a trained model they are learned): W_K turns a region's colour
into the key features of queries.KEY_FEATURES, and W_V keeps only the colour, so every output is a colour: the
average colour of what the query attended to. In (d), W_Q = s × W_K without its brightness column: each region
asks for regions whose key points the way its own does (see query_weights).

Everything is float64: the permutation check then measures the layer, not float32 rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError

# W_K: (D, D_k) = (5, 4); rows red, green, blue, height, across; columns warmth, green-ness, brightness, height
W_K = torch.tensor([[1.0, -0.5, 1 / 3, 0.0],
                    [0.0, 1.0, 1 / 3, 0.0],
                    [-1.0, -0.5, 1 / 3, 0.0],
                    [0.0, 0.0, 0.0, 1.0],
                    [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
# W_V: (D, D_v) = (5, 3); keeps red, green, blue and drops the position
W_V = torch.eye(5, 3, dtype=torch.float64)
VALUE_FEATURES = ("red", "green", "blue")


@dataclass(frozen=True)
class Attended:
    """One attention over the regions. M = 1 for step (a) (its tensors keep the M axis)."""
    queries: torch.Tensor  # Q (M, D_k); in steps a, b D_k = D
    keys: torch.Tensor  # K (N, D_k); in steps a, b the region vectors themselves
    values: torch.Tensor  # V (N, D_v); in steps a, b the region vectors themselves
    scale: float  # 1/√D_k
    scores: torch.Tensor  # E = Q Kᵀ · scale (M, N)
    weights: torch.Tensor  # A = softmax(E) over the regions (M, N), each row sums to 1
    outputs: torch.Tensor  # Y = A V (M, D_v)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> Attended:
    """Scaled dot-product attention of M queries over N keys and values, every step kept."""
    if q.shape[-1] != k.shape[-1]:
        raise AttnvizError(f"A query of {q.shape[-1]} numbers cannot be compared with keys of {k.shape[-1]}.")
    scale = 1.0 / math.sqrt(k.shape[-1])  # 1/√D_k: keeps the scores' spread from growing with the width
    e = (q @ k.T) * scale  # e_ij = q_i · k_j / √D_k                    (M, N)
    a = torch.softmax(e, dim=-1)  # a_i = softmax(e_i), over the N regions (M, N)
    y = a @ v  # y_i = Σ_j a_ij v_j                                       (M, D_v)
    return Attended(queries=q, keys=k, values=v, scale=scale, scores=e, weights=a, outputs=y)


def one_query(x: torch.Tensor, q: torch.Tensor) -> Attended:
    """(a) One query q (D,) over the region vectors x (N, D): keys and values are x itself."""
    return attend(q.reshape(1, -1), x, x)  # q as one row: (1, D)


def many_queries(x: torch.Tensor, queries: torch.Tensor) -> Attended:
    """(b) M queries (M, D) at once: one softmax per row, M context vectors (M, D)."""
    return attend(queries, x, x)


def keys_and_values(x: torch.Tensor, queries: torch.Tensor, w_k: torch.Tensor = W_K,
                    w_v: torch.Tensor = W_V) -> Attended:
    """(c) Keys for matching, values for the answer: K = X W_K (N, D_k), V = X W_V (N, D_v); queries (M, D_k)."""
    k = x @ w_k  # k_j = x_j W_K   (N, D_k)
    v = x @ w_v  # v_j = x_j W_V   (N, D_v)
    return attend(queries, k, v)


def query_weights(strength: float) -> torch.Tensor:
    """W_Q for step (d): s × W_K with its brightness column set to 0 (D, D_k).

    With brightness in the queries every region would ask for the brightest regions (the sun, the sky); without it
    a region asks for keys whose warmth, green-ness and height point the way its own do: grass for grass, sky for sky.
    """
    keep = torch.tensor([1.0, 1.0, 0.0, 1.0], dtype=torch.float64)  # warmth, green-ness, (brightness), height
    return strength * W_K * keep  # (D, D_k): column c scaled by keep[c]


def self_attention(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor = W_K, w_v: torch.Tensor = W_V) -> Attended:
    """(d) The regions query each other: Q = X W_Q (N, D_k); the outputs are N vectors (N, D_v)."""
    q = x @ w_q  # q_i = x_i W_Q   (N, D_k)
    return keys_and_values(x, q, w_k, w_v)


def shuffled_order(n: int, seed: int) -> torch.Tensor:
    """A seeded permutation of n regions that is not the identity (for n ≥ 2): region order[r] goes to place r."""
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    if n >= 2 and bool((order == torch.arange(n)).all()):
        order[[0, 1]] = order[[1, 0]]
    return order


@dataclass(frozen=True)
class PermutationCheck:
    """f(P X) against P f(X) for the self-attention layer f and a permutation P of the regions."""
    order: torch.Tensor  # (N,): P X puts region order[r] in place r
    attended: Attended  # f(X)
    attended_shuffled: Attended  # f(P X)

    @property
    def output_difference(self) -> float:
        """max |f(P X) − P f(X)| over every region and output feature."""
        return float((self.attended_shuffled.outputs - self.attended.outputs[self.order]).abs().max())

    @property
    def weight_difference(self) -> float:
        """max |A(P X) − P A(X) Pᵀ|: the weights move with their rows and their columns."""
        moved = self.attended.weights[self.order][:, self.order]  # (N, N)
        return float((self.attended_shuffled.weights - moved).abs().max())


def permutation_check(x: torch.Tensor, w_q: torch.Tensor, seed: int) -> PermutationCheck:
    """Self-attention on the regions and on the regions shuffled (seeded), both kept for comparison."""
    order = shuffled_order(x.shape[0], seed)
    return PermutationCheck(order=order, attended=self_attention(x, w_q),
                            attended_shuffled=self_attention(x[order], w_q))  # x[order] = P X  (N, D)
