"""What the step-by-step page draws for each step: the matrix, its labels, and its colour range.

The page hands each StepMatrix to ui/heatmap.heatmap: weights (0..1) on the shared scale, every
other matrix signed and centred at 0, with −∞ (masked scores) kept as −∞ for the heatmap to show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.errors import AttnvizError
from attnviz.lessons.step_by_step.steps import HeadSteps

SQUARE_VALUES_UP_TO = 16  # n × n matrices print their numbers only up to this many tokens (cells get narrow)


def symmetric_limit(z: np.ndarray) -> float:
    """max |finite z|, so that 0 sits in the middle of the colour scale (1 when there is nothing finite)."""
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def percentile_limit(z: np.ndarray, q: float = 99.0) -> float:
    """The q-th percentile of |finite z|: a colour range that a few outlier features cannot wash out."""
    finite = np.abs(z[np.isfinite(z)])
    return float(np.percentile(finite, q)) if finite.size and finite.max() > 0 else 1.0


@dataclass(frozen=True)
class StepMatrix:
    """What the page hands to ui/heatmap.heatmap for one step: the matrix and how to label and colour it."""

    matrix: np.ndarray  # (rows, cols); -inf where masked (S″ only)
    row_labels: list[str]
    col_labels: list[str] | None  # None = numbered feature columns
    title: str
    # "weights" (A, 0..1) or "signed" (everything else, centred at 0). Of SCALE_KINDS, magnitude and mask fit no
    # step: X, Q, K, V and the outputs go negative, and S″ = S′ + M holds scores beside its −∞, not M alone
    kind: str
    limit: float | None  # signed colour range ±limit (None = the matrix's own)
    show_values: bool
    x_title: str = "feature"


def step_matrix(steps: HeadSteps, key: str, show_values: bool = False) -> StepMatrix:
    """The matrix of one step card (keys as in step_cards, plus "Q", "K", "V", and "Q_before", "K_before" for a
    RoPE model), as the page draws it.

    S, S′ and S″ share one colour range so that the scaling visibly shrinks (or grows) the scores; X is
    clipped at the 99th percentile (a few outlier features of real models would wash everything out).
    """
    labels, n = steps.labels, len(steps.labels)
    n_square = show_values and n <= SQUARE_VALUES_UP_TO
    C, hs = steps.x.shape[1], steps.d_head
    as_array = lambda t: np.asarray(t, dtype=np.float32)
    if key == "weights":
        return StepMatrix(as_array(steps.weights), labels, labels, f"A = softmax(S″), head {steps.head}", "weights",
                          None, n_square, "key")
    # a title's " · " parts: where its panel is too narrow the heatmap drops the trailing ones whole ("S = Q Kᵀ (9 × 9)
    # …", the whole title in its tooltip), where CSS would cut it mid-word
    if key in ("scores", "scaled", "masked"):
        scores = "S = Q′ K′ᵀ" if steps.rope else "S = Q Kᵀ"  # after RoPE the score uses the turned Q′ and K′
        matrix, title = {"scores": (steps.scores, scores), "scaled": (steps.scaled, "S′ = S·s"),
                         "masked": (steps.masked_scores, "S″ = S′ + M")}[key]
        shared = max(symmetric_limit(as_array(steps.scores)), symmetric_limit(as_array(steps.scaled)))
        return StepMatrix(as_array(matrix), labels, labels, f"{title} ({n} × {n}) · colours ±{shared:.3g}, shared by "
                          "S, S′, S″", "signed", shared, n_square, "key")
    W, turned = steps.concat.shape[1], " after RoPE" if steps.rope else ""  # W = nh·hs: C unless head_dim is set
    kv = f", K/V head {steps.kv_head}" if steps.rope else ""  # the K/V head this query head shares (GQA)
    matrix, title = {
        "x": (steps.x, f"X ({n} × {C})"), "Q": (steps.q, f"Q{turned} ({n} × {hs})"),
        "K": (steps.k, f"K{turned}{kv} ({n} × {hs})"), "V": (steps.v, f"V{kv} ({n} × {hs})"),
        "Q_before": (steps.q_before, f"Q before RoPE ({n} × {hs})"),
        "K_before": (steps.k_before, f"K before RoPE{kv} ({n} × {hs})"),
        "head": (steps.head_out, f"head {steps.head} = A V ({n} × {hs})"),
        "concat": (steps.concat, f"Concat ({n} × {W}) · head {steps.head}'s columns {steps.head * hs}–"
                                 f"{(steps.head + 1) * hs - 1}"),
        "out": (steps.attn_out, f"Concat·W_O + b_O ({n} × {C})"),
    }[key]
    if matrix is None:
        raise AttnvizError(f"This model has no RoPE: there is no {key!r} step.")
    z = as_array(matrix)
    if key == "x":
        clip = percentile_limit(z)
        return StepMatrix(z, labels, None, f"{title} · colours clipped at ±{clip:.3g} (99th percentile)", "signed",
                          clip, show_values)
    return StepMatrix(z, labels, None, title, "signed", None, show_values)
