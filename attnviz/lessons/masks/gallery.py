"""Every mask the engine offers, side by side: its M matrix, what it does to a head, and what it costs.

A mask decides which (query, key) pairs are scored at all. The number of allowed pairs is the work
(and memory) one attention head does, so it is also the lesson in cost: full attention scores n²
pairs, and a sliding window only about n·(2w + 1).
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.draw.line_chart import line_chart_svg
from attnviz.engine.mask_kinds import MASKS, parse_mask


def gallery_values(window: int = 2, stride: int = 3, n_pad: int = 2, keep: float = 0.3, seed: int = 0,
                   global_tokens: tuple[int, ...] = (0,), custom: str = "custom:") -> dict:
    """The gallery's controls as the mask kinds' parameter values (by parameter name): the window slider sets both
    the sliding window and global + local's window; custom is a whole 'custom:…' spec. A kind with a parameter no
    control names is shown at that parameter's default: its example."""
    return {"window": window, "gwindow": window, "stride": stride, "pad": n_pad, "keep": keep, "seed": seed,
            "globals": ",".join(str(g) for g in global_tokens), "custom": custom.partition(":")[2]}


def gallery_specs(**controls) -> dict[str, str]:
    """kind -> the mask spec the gallery shows for it, one per registered kind, in the registry's order.
    controls: those of gallery_values."""
    values = gallery_values(**controls)
    return {name: kind.spec(values) for name, kind in MASKS.items()}


# ---- how many pairs a mask lets through ---------------------------------------------------------


def attended_pairs(mask: torch.Tensor | None, n: int) -> int:
    """The number of (query, key) pairs that are scored: mask.sum(), or n² when there is no mask."""
    return n * n if mask is None else int(mask.reshape(n, n).sum())


def attended_pairs_formula(kind: str, n: int, **controls) -> float:
    """Allowed pairs for `kind` at n tokens, in closed form, from the kind's own count (engine/mask_kinds.py), at the
    gallery's controls (gallery_values): exact for every kind but random (its expected value); nan for a kind with
    no size of its own (custom)."""
    mask_kind = MASKS[kind]
    if mask_kind.pairs is None:
        return float("nan")
    return float(mask_kind.pairs(n, mask_kind.values(mask_kind.spec(gallery_values(**controls)))))


def cost_grid(current_n: int | None = None, lo: int = 8, hi: int = 512, points: int = 48) -> np.ndarray:
    """The n at which the cost chart evaluates its formulas: evenly spaced and evenly spaced in log n (so both axes
    draw smooth curves from ~90 points, not 505), the two ends, and the user's n (its dots are then exact values,
    not interpolated). Sorted whole numbers."""
    grid = np.concatenate([np.linspace(lo, hi, points), np.geomspace(lo, hi, points)])
    if current_n is not None:
        grid = np.append(grid, current_n)
    return np.unique(np.rint(grid).astype(np.int64))


def attended_pairs_curves(ns, **controls) -> dict[str, np.ndarray]:
    """kind -> allowed pairs at every n in ns, for every kind with a count of its own (custom has none)."""
    return {
        name: np.array([attended_pairs_formula(name, int(n), **controls) for n in ns], dtype=np.float64)
        for name, kind in MASKS.items() if kind.pairs is not None
    }


def attended_pairs_chart(ns, curves: dict[str, np.ndarray], current_n: int | None = None,
                         log_axes: bool = False) -> str:
    """One line per mask: how the scored pairs grow with n (an SVG, see attnviz.draw.line_chart). Log-log turns
    n² into slope 2, n into slope 1. The x axis runs over the data (and the user's n), not beyond."""
    return line_chart_svg(ns, {MASKS[kind].title: pairs for kind, pairs in curves.items()},
                          x_title="n (tokens)", y_title="(query, key) pairs scored", log_axes=log_axes,
                          marker_x=current_n, marker_label="" if current_n is None else f"your text: n = {current_n}",
                          label="pairs scored as the text grows, one line per mask")


def cost_lesson(n: int = 512, window: int = 2) -> str:
    """A few sentences, with numbers, on why the number of scored pairs is the cost of attention."""
    full = attended_pairs_formula("none", n)
    causal = attended_pairs_formula("causal", n)
    local = attended_pairs_formula("window", n, window=window)
    return (
        "Every allowed pair costs one dot product q·k and one weight to keep in memory, in every head of "
        f"every layer. Full attention scores all n² pairs, so doubling the text quadruples the work: at n = {n} "
        f"that is {full:,.0f} pairs per head. The causal mask halves it ({causal:,.0f}), but half of n² still "
        f"grows as n². A sliding window of {window} keeps at most {2 * window + 1} keys per query, so its cost "
        f"grows only in step with n: {local:,.0f} pairs at n = {n}, {100 * local / full:.1f}% of full. A fixed "
        "stride s only divides n² by s (still slope 2 below); long-text models such as Longformer and BigBird "
        "stay linear by pairing a sliding window with a few global tokens (plus, in BigBird, a few random keys). "
        "On log-log axes n² is a line of slope 2 and n one of slope 1. The random mask here keeps each pair by its own "
        "coin flip, so it still costs about p·n² (BigBird instead keeps a fixed r random keys per query). "
        "Mind what a mask saves: these counts are the pairs a *sparse* kernel would score. A dense implementation "
        "such as this one (and most libraries' default attention) computes every one of the n² scores anyway and "
        "only then sets the forbidden ones to −∞: a mask by itself saves nothing, it changes the weights, not the "
        "work. The Efficient attention page shows kernels that really skip the masked blocks, and measures them."
    )


# ---- the gallery card: M beside the weights it produces -----------------------------------------


def allowed_matrix(mask: torch.Tensor | None, n: int) -> np.ndarray:
    """(n, n) uint8: 1 where the key is allowed (M = 0), 0 where it is forbidden (M = -inf)."""
    if mask is None:
        return np.ones((n, n), dtype=np.uint8)
    return mask.reshape(n, n).numpy().astype(np.uint8)


def additive_matrix(mask: torch.Tensor | None, n: int) -> np.ndarray:
    """(n, n) float32 M as the softmax sees it: 0 where the key is allowed, -inf where it is forbidden."""
    return np.where(allowed_matrix(mask, n) == 1, 0.0, -np.inf).astype(np.float32)


def gallery_masks(specs: dict[str, str], n: int) -> dict[str, torch.Tensor | None]:
    """kind -> the (n, n) bool mask of its spec (padding specs mean n already counts the [PAD] tokens)."""
    return {kind: parse_mask(spec, n) for kind, spec in specs.items()}


# ---- padding in a batch ----------------------------------------------------------------------------


def pad_column_weight(weights: torch.Tensor, n_pad: int) -> float:
    """The largest weight any query puts on a [PAD] key (the last n_pad columns): 0.0 when masked."""
    if n_pad <= 0:
        return 0.0
    return float(weights[..., -n_pad:].abs().max())


def real_rows_difference(padded: torch.Tensor, alone: torch.Tensor) -> float:
    """max |padded - alone| over the real tokens' rows and columns: (..., T, T) vs (..., n, n), n <= T.

    Near 0 means padding changed nothing for the real tokens, which is the point of the padding mask.
    """
    n = alone.shape[-1]
    return float((padded[..., :n, :n] - alone).abs().max())
