"""RoPE on one query and one key: the rotation of each pair, and a score that sees only i − j.

D = d_head. Pair p is (x_p, x_{p+D/2}) (transformers' half split, see attnviz.engine.rope); at position
t it turns by the angle t · θ_p with θ_p = base^(−2p/D). A query at i and a key at j then score
    s(i, j) = R(i)q · R(j)k = q · R(j − i)k,
because R(i)ᵀR(j) = R(j − i): only the distance survives.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.models.stack import RopeLayerTrace
from attnviz.engine.rope import apply_rope, rope_angles, rope_frequencies
from attnviz.errors import AttnvizError
from attnviz.lessons.positions.encodings import sinusoidal_table

DEFAULT_THETA = 10000.0
MAX_DEMO_POSITIONS = 256


@dataclass(frozen=True)
class RopeSettings:
    inv_freq: torch.Tensor  # θ_p for p = 0 .. D/2 − 1 (D/2,): the angle each pair turns per position
    d_head: int
    from_model: bool  # True: the model on screen rotates its own queries and keys with these
    label: str
    theta: float | None  # the base when θ_p = base^(−2p/D) exactly; None for scaled types (linear, llama3)


def model_inverse_frequencies(model) -> torch.Tensor | None:
    """The θ_p a RoPE model rotates with (its config's, scaling included), or None for a model without RoPE."""
    inv_freq = model.cfg.inv_freq
    return None if inv_freq is None else inv_freq.detach().float().cpu()


def rope_settings(model) -> RopeSettings:
    """The model's own rotation when it has RoPE, else θ = 10000 with its d_head, labelled which."""
    inv_freq = model_inverse_frequencies(model)
    if inv_freq is not None:
        d_head = 2 * inv_freq.shape[0]
        kind = model.cfg.rope_type
        theta = None
        if kind == "default" and d_head > 2:  # θ_1 = base^(−2/D); float32 θ_1 leaves ~1e-6 noise: keep 5 digits
            theta = float(f"{float(inv_freq[1]) ** (-d_head / 2):.5g}")
        base = f"θ = {theta:.6g}" if theta else f"'{kind}' RoPE (its frequencies rescaled)"
        return RopeSettings(inv_freq, d_head, True, f"{model.name}'s own RoPE: {base}, d_head = {d_head}", theta)
    d_head = model.d_head if model.d_head % 2 == 0 else model.d_head + 1
    return RopeSettings(rope_frequencies(d_head, DEFAULT_THETA), d_head, False,
                        f"{model.name} has no RoPE (its positions are added to the tokens), so this uses the default "
                        f"θ = {DEFAULT_THETA:g} with its d_head = {d_head}", DEFAULT_THETA)


def seeded_query_key(d_head: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A query and a key (D,) each, entries from N(0, 1), reproducible from the seed."""
    if not isinstance(d_head, int) or d_head < 2 or d_head % 2:
        raise AttnvizError(f"RoPE turns pairs of numbers: d_head must be an even number ≥ 2 (got {d_head!r}).")
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d_head, generator=g), torch.randn(d_head, generator=g)


def _frequencies(d_head: int, inv_freq: torch.Tensor | None) -> torch.Tensor:
    """inv_freq as given (a model's own), or the default θ = 10000 ones for this head size."""
    if inv_freq is None:
        return rope_frequencies(d_head, DEFAULT_THETA)
    if inv_freq.shape != (d_head // 2,):
        raise AttnvizError(f"{inv_freq.shape[0]} frequencies do not fit a head of {d_head} numbers.")
    return inv_freq.detach().float().cpu()  # a model's own may sit on its GPU; this demo turns CPU tensors


def rotated(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """x (D,) placed at each position and rotated there: (T, D)."""
    cos, sin = rope_angles(positions, _frequencies(x.shape[-1], inv_freq))  # each (T, D)
    return apply_rope(x.expand(len(positions), -1), cos, sin)  # (T, D)


def pair_track(x: torch.Tensor, pair: int, n_positions: int, inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """Where pair p of x lands at positions 0 .. T−1: (T, 2) points (x_p, x_{p+D/2}) on one circle."""
    half = x.shape[-1] // 2
    if not 0 <= pair < half:
        raise AttnvizError(f"Pair {pair} does not exist: a head of {x.shape[-1]} numbers has pairs 0 .. {half - 1}.")
    r = rotated(x, torch.arange(n_positions), inv_freq)  # (T, D)
    return torch.stack([r[:, pair], r[:, pair + half]], dim=1)  # (T, 2)


def pair_angle_step(d_head: int, pair: int, inv_freq: torch.Tensor | None = None) -> float:
    """θ_p in radians: how far pair p turns per position step."""
    return float(_frequencies(d_head, inv_freq)[pair])


def rope_score_table(q: torch.Tensor, k: torch.Tensor, n_positions: int,
                     inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """S[i, j] = R(i)q · R(j)k for i, j < T: (T, T), the unscaled score of q at i against k at j."""
    if not isinstance(n_positions, int) or not 1 <= n_positions <= MAX_DEMO_POSITIONS:
        raise AttnvizError(f"Pick between 1 and {MAX_DEMO_POSITIONS} positions (got {n_positions!r}).")
    positions = torch.arange(n_positions)
    return rotated(q, positions, inv_freq) @ rotated(k, positions, inv_freq).T  # (T, T)


def shift_difference(q: torch.Tensor, k: torch.Tensor, n_positions: int, shift: int,
                     inv_freq: torch.Tensor | None = None) -> float:
    """max over i, j < T of |S(i, j) − S(i + s, j + s)|: ≈ 0 (float rounding) when only i − j matters."""
    if not isinstance(shift, int) or shift < 0 or n_positions + shift > MAX_DEMO_POSITIONS:
        raise AttnvizError(f"The shift must be between 0 and {MAX_DEMO_POSITIONS - n_positions} here (got {shift!r}).")
    table = rope_score_table(q, k, n_positions + shift, inv_freq)  # (T + s, T + s)
    return float((table[:n_positions, :n_positions] - table[shift:, shift:]).abs().max())


def diagonal_spread(table: torch.Tensor) -> float:
    """The largest max − min along any diagonal j − i = const of a square table: 0 when it depends on j − i only."""
    T = table.shape[0]
    spreads = [torch.diagonal(table, offset=d) for d in range(-(T - 1), T)]
    return max(float(s.max() - s.min()) for s in spreads)


def added_positions_score_table(q: torch.Tensor, k: torch.Tensor, n_positions: int) -> torch.Tensor:
    """For contrast: (q + PE_i) · (k + PE_j) with sinusoidal PE added, (T, T). The cross terms q · PE_j and
    PE_i · k depend on where each token sits, not only on i − j."""
    pe = sinusoidal_table(max(n_positions, 2), q.shape[-1])[:n_positions]  # (T, D)
    return (q + pe) @ (k + pe).T  # (T, T)


@dataclass
class ModelRotation:
    """A RoPE model's own queries and keys before and after its rotation, and this page's rotation of them."""

    q_before: torch.Tensor  # X W_Q per query head, as the model kept it (L, nh, T, hs)
    q_after: torch.Tensor  # the model's q after RoPE (L, nh, T, hs)
    q_here: torch.Tensor  # q_before rotated here with the page's frequencies (L, nh, T, hs)
    k_after: torch.Tensor  # the model's K after RoPE, one per K/V head (L, nkv, T, hs)
    k_here: torch.Tensor  # k_before_rope rotated here (L, nkv, T, hs)

    @property
    def gap(self) -> float:
        """max |rotated here − the model's own| over every layer, head, token and number of q and k."""
        return max(float((self.q_here - self.q_after).abs().max()), float((self.k_here - self.k_after).abs().max()))


def model_rotation(res, inv_freq: torch.Tensor) -> ModelRotation:
    """The run's (keep=True) q and k before RoPE, rotated with inv_freq at positions 0 .. T−1, beside the model's own."""
    if res.traces is None or not isinstance(res.traces[0], RopeLayerTrace):
        raise AttnvizError("This run has no RoPE trace: the model adds its positions to the tokens instead.")
    first = lambda name: torch.stack([getattr(t, name)[0].cpu() for t in res.traces])  # (L, heads, T, hs)
    q_before, k_before = first("q_before_rope"), first("k_before_rope")
    cos, sin = rope_angles(torch.arange(q_before.shape[2]), _frequencies(q_before.shape[-1], inv_freq))  # (T, hs)
    return ModelRotation(q_before=q_before, q_after=first("q"), q_here=apply_rope(q_before, cos, sin),
                         k_after=first("k_cached"), k_here=apply_rope(k_before, cos, sin))


def rotation_rows(rot: ModelRotation, layer: int, head: int, pair: int, inv_freq: torch.Tensor) -> list[dict]:
    """Per token t: the angle t·θ_p and pair p of the query head before and after RoPE (the model's own)."""
    half = rot.q_before.shape[-1] // 2
    rows = []
    for t in range(rot.q_before.shape[2]):
        before, after = rot.q_before[layer, head, t], rot.q_after[layer, head, t]
        rows.append({"position t": t, "angle t·θ_p (rad)": round(t * float(inv_freq[pair]), 4),
                     "q pair before": f"({float(before[pair]):.3f}, {float(before[pair + half]):.3f})",
                     "q pair after (model)": f"({float(after[pair]):.3f}, {float(after[pair + half]):.3f})",
                     "pair length (before = after)": round(float(torch.hypot(before[pair], before[pair + half])), 4)})
    return rows
