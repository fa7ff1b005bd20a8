"""The cross-attention equation with the real shapes of the run on screen."""

from __future__ import annotations

from attnviz.draw.latex import scale_text


def cross_attention_equation(n_target: int, n_source: int, d_model: int, d_head: int, scale: float) -> str:
    """Q from the target, K and V from the source, per head, each line with its shape."""
    t, s, c, h = n_target, n_source, d_model, d_head
    return (
        r"\small\begin{aligned}"
        rf"Q &= X_{{\text{{target}}}}\,W_Q &&({t}\times{c})({c}\times{h}) = {t}\times{h}\\"
        rf"K &= X_{{\text{{source}}}}\,W_K &&({s}\times{c})({c}\times{h}) = {s}\times{h}\\"
        rf"V &= X_{{\text{{source}}}}\,W_V &&{s}\times{h}\\"
        rf"A &= \mathrm{{softmax}}\!\left({scale_text(scale, h)}\right) &&({t}\times{h})({h}\times{s}) = {t}\times{s}\\"
        rf"\mathrm{{head}} &= A\,V &&({t}\times{s})({s}\times{h}) = {t}\times{h}"
        r"\end{aligned}"
    )
