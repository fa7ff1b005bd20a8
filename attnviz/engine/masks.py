"""Attention masks: boolean (n_q, n_k) matrices, True = the query (row) may attend to the key (column).

Inside attention a mask becomes the additive matrix M of softmax(Q Kᵀ · s + M): M = 0 where True,
M = -inf where False, so forbidden keys get weight exactly 0 after the softmax.

A row with no True entries (a query that may attend to nothing) gets zero weights and zero output,
the policy of PyTorch's SDPA; see `attnviz.engine.attention.masked_softmax`.

This module builds the matrices. The kinds of mask, their short string specs (used by the API and in the app's
URL: "causal", "window:2", "global:1:0,5", "causal&window:2", ...) and the parser `parse_mask` are the registry's,
in attnviz.engine.mask_kinds: each kind there names the function here that builds it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from attnviz.errors import AttnvizError


def _positions(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    i = torch.arange(n).unsqueeze(1)  # query positions (n, 1)
    j = torch.arange(n).unsqueeze(0)  # key positions   (1, n)
    return i, j


def causal_mask(n: int) -> torch.Tensor:
    """j <= i: no query looks at a later token (the lower triangle, diagonal included)."""
    i, j = _positions(n)
    return j <= i


def key_padding_mask(n: int, n_pad: int) -> torch.Tensor:
    """The last n_pad keys are padding: every row forbids them; the real tokens are unaffected."""
    _check_count("padding", n_pad, 0, n)
    _, j = _positions(n)
    return (j < n - n_pad).expand(n, n).clone()


def padding_mask_from_attention_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """A (B, T) 0/1 attention mask (as tokenizers return it) -> bool (B, 1, 1, T) key mask."""
    if attention_mask.dim() != 2:
        raise AttnvizError(f"An attention mask must be (batch, tokens), got shape {tuple(attention_mask.shape)}.")
    return attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T): broadcasts over heads and queries


def window_mask(n: int, width: int) -> torch.Tensor:
    """|i - j| <= width: a sliding window (local attention) of 2·width + 1 keys per query."""
    _check_count("window", width, 0, None)
    i, j = _positions(n)
    return (i - j).abs() <= width


def strided_mask(n: int, stride: int) -> torch.Tensor:
    """(i - j) divisible by stride: a dilated pattern that reaches far with few keys."""
    _check_count("strided", stride, 1, None)
    i, j = _positions(n)
    return (i - j) % stride == 0


def global_local_mask(n: int, width: int, global_tokens: Iterable[int]) -> torch.Tensor:
    """A window of `width` plus global tokens that attend to all and are attended by all (Longformer)."""
    mask = window_mask(n, width)
    for g in global_tokens:
        if not 0 <= g < n:
            raise AttnvizError(f"Global token {g} is outside the sequence (0 to {n - 1}).")
        mask[g, :] = True
        mask[:, g] = True
    return mask


def random_mask(n: int, keep: float, seed: int = 0) -> torch.Tensor:
    """Each (query, key) pair kept with probability `keep`, reproducibly; the diagonal is always kept
    so that every token sees at least itself."""
    if not 0.0 <= keep <= 1.0:
        raise AttnvizError(f"random: the keep probability must be between 0 and 1, got {keep}.")
    generator = torch.Generator().manual_seed(int(seed))
    mask = torch.rand(n, n, generator=generator) < keep
    return mask | torch.eye(n, dtype=torch.bool)


def custom_mask(matrix, n: int | None = None) -> torch.Tensor:
    """A mask from a 0/1 matrix (nested lists, numpy, tensor, or '101/011' rows). Checked for shape."""
    if isinstance(matrix, str):
        rows = [r.strip() for r in matrix.strip().split("/") if r.strip()]
        if not rows or any(set(r) - {"0", "1"} for r in rows):
            raise AttnvizError("A custom mask is written as rows of 0 and 1 separated by '/', e.g. 110/011/001.")
        if len({len(r) for r in rows}) > 1:
            raise AttnvizError("A custom mask must be a rectangular matrix of 0 and 1.")
        # the characters as bytes, compared at once: a 512-token mask is 262,144 of them (lists of bools: 0.1 s)
        ones = np.frombuffer("".join(rows).encode("ascii"), dtype=np.uint8) == ord("1")
        matrix = torch.from_numpy(ones.reshape(len(rows), len(rows[0])))  # (rows, cols) bool
    try:
        t = torch.as_tensor(matrix)
    except (TypeError, ValueError, RuntimeError):
        raise AttnvizError("A custom mask must be a rectangular matrix of 0 and 1.") from None
    if t.dim() != 2:
        raise AttnvizError(f"A custom mask must be a 2-D matrix, got {t.dim()} dimension(s).")
    if t.dtype != torch.bool:
        if t.is_floating_point() or t.is_complex() or not torch.isin(t, torch.tensor([0, 1])).all():
            raise AttnvizError("A custom mask may only hold 0 (forbidden) and 1 (allowed), or True/False.")
        t = t.bool()
    if n is not None and tuple(t.shape) != (n, n):
        raise AttnvizError(f"The custom mask is {t.shape[0]}×{t.shape[1]} but the text has {n} tokens: it must be {n}×{n}.")
    return t


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of the masks that are given: a pair is allowed only if every mask allows it."""
    present = [m for m in masks if m is not None]
    if not present:
        return None
    out = present[0]
    for m in present[1:]:
        out = out & m
    return out


def _check_count(name: str, value: int, low: int, high: int | None) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise AttnvizError(f"{name}: the number must be {bound}, got {value}.")
