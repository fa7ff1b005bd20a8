"""LaTeX for the encoder-layer page: each stage's equation with token i's numbers, LayerNorm's μ and σ."""

from __future__ import annotations

import torch

from attnviz.draw.latex import fmt
from attnviz.lessons.encoder_layer.steps import LayerSteps, Stage

SHOWN = 5  # entries of a vector written out before "…"
ALL_UP_TO = 8  # vectors this short (the toy's d_model) are written out in full


def vector_numbers(vec: torch.Tensor, limit: int = SHOWN) -> str:
    """(0.52, -1.2, …) then, on the next line of an aligned block, ∈ R^384 and its L2 norm."""
    limit = vec.numel() if vec.numel() <= ALL_UP_TO else limit
    shown = ", ".join(fmt(float(v)) for v in vec[:limit])
    more = r",\ \dots" if vec.numel() > limit else ""
    norm = fmt(float(vec.norm()), 4)
    return rf"\left({shown}{more}\right) \\ &\in \mathbb{{R}}^{{{vec.numel()}}},\quad \lVert\cdot\rVert_2 = {norm}"


def stage_latex(stage: Stage, i: int) -> str:
    """The stage's equation for token i, then token i's vector."""
    equation = stage.equation.replace("_i", f"_{{{i}}}")
    return rf"\begin{{aligned}} &{equation} \\ &= {vector_numbers(stage.value[i])} \end{{aligned}}"


def layer_norm_numbers(steps: LayerSteps, key: str, i: int) -> str:
    """μ and σ = √(var + ε) of the vector that LayerNorm `key` normalises, for token i."""
    mu, sigma = steps.ln[key]
    return (rf"\begin{{aligned}} \mu_{{{i}}} &= {fmt(float(mu[i]), 4)} \\"
            rf" \sqrt{{\sigma_{{{i}}}^2 + \varepsilon}} &= {fmt(float(sigma[i]), 4)} \end{{aligned}}")


def trace_check(gaps: dict[str, float]) -> str:
    names = {"attn_out": r"\mathrm{MHA}", "x_mid": r"x^{\text{mid}}", "x_out": r"x^{\text{out}}"}
    parts = [rf"{names[k]}: {fmt(v, 2)}" for k, v in gaps.items()]
    return r"\max\,|\text{recomputed} - \text{model's trace}|:\quad " + r",\quad ".join(parts)
