"""One method beside exact attention on one head: the patterns, |Δ|, and the output error.

A method's pattern is read off the method itself: every method here is linear in V, out = A V, so
running it with V = I (the n × n identity) returns A, the weights it effectively applies. For the
exact and sparse kernels that is the usual weight matrix; for Linformer, Performer and Reformer it is
the mixing the approximation really does, computed by the approximation's own code.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.engine.efficient import shared_keys
from attnviz.errors import AttnvizError
from attnviz.lessons.efficient.method import Method, reference_output

MAX_PATTERN_N = 192  # the most tokens drawn as heatmaps (192² cells, each one a number sent to the browser)
MAX_RANDOM_D = 256


@dataclass
class Comparison:
    reference_weights: torch.Tensor  # (n, n) what the method is measured against (exact, masked exact or shared-QK)
    method_weights: torch.Tensor  # (n, n) the method's effective weights: method(q, k, I)
    weight_delta: torch.Tensor  # (n, n) method − reference
    output_error: float  # ‖out − exact‖ / ‖exact‖ on the real V
    max_weight_delta: float  # max |Δ| over the weights
    full_error: float  # ‖out − full exact attention‖ / ‖full‖: what a mask or an approximation changes in all


def random_qkv(n: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q, K, V (n, d) with entries from N(0, 1), seeded."""
    if n < 1:
        raise AttnvizError(f"n must be at least 1, got {n}.")
    if not 1 <= d <= MAX_RANDOM_D:
        raise AttnvizError(f"d must be between 1 and {MAX_RANDOM_D}, got {d}.")
    g = torch.Generator().manual_seed(int(seed))
    return tuple(torch.randn(n, d, generator=g) for _ in range(3))


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """‖out − ref‖ / ‖ref‖ (Frobenius); 0 when both are zero."""
    denom = float(ref.norm())
    diff = float((out - ref).norm())
    return diff / denom if denom > 0 else diff


def compare(method: Method, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, knobs: dict, scale) -> Comparison:
    """q, k (n, d_k), v (n, d_v): the method against its reference, as patterns and as outputs."""
    n = q.shape[-2]
    if n > MAX_PATTERN_N:
        raise AttnvizError(f"Patterns are drawn for at most {MAX_PATTERN_N} tokens, got {n}.")
    eye = torch.eye(n, dtype=q.dtype)
    method_weights = method.run(q, k, eye, knobs, scale)  # A = method(Q, K, I)   (n, n)
    if method.reference == "shared-qk":
        keys, mask = shared_keys(q), None
    else:
        keys, mask = k, method.mask(n, knobs)
    _, reference_weights = scaled_dot_product_attention(q, keys, v, mask=mask, scale=scale)  # (n, n)
    out = method.run(q, k, v, knobs, scale)  # (n, d_v)
    full = scaled_dot_product_attention(q, k, v, scale=scale)[0]
    delta = method_weights - reference_weights
    return Comparison(
        reference_weights=reference_weights, method_weights=method_weights, weight_delta=delta,
        output_error=relative_error(out, reference_output(method, q, k, v, knobs, scale)),
        max_weight_delta=float(delta.abs().max()), full_error=relative_error(out, full),
    )
