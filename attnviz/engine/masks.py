"""Attention masks: boolean (n_q, n_k) matrices, True = the query (row) may attend to the key (column).

Inside attention a mask becomes the additive matrix M of softmax(Q Kᵀ · s + M): M = 0 where True,
M = -inf where False, so forbidden keys get weight exactly 0 after the softmax.

A row with no True entries (a query that may attend to nothing) gets zero weights and zero output,
the policy of PyTorch's SDPA; see `attnviz.engine.attention.masked_softmax`.

Masks are also named by short string specs, used by the API and in the app's URL:
    "none"             every query sees every key
    "causal"           each query sees itself and earlier tokens
    "padding:K"        the last K tokens are [PAD]: no query may attend to them
    "window:W"         each query sees keys at most W positions away (sliding window / local)
    "strided:S"        each query sees keys a multiple of S positions away (dilated). No local window:
                       the Sparse Transformer's strided pattern is a local window OR every s-th key; this is the
                       stride alone
    "global:W:i,j"     a window of W plus global tokens i, j that see and are seen by all (Longformer)
    "random:P:SEED"    each pair kept with probability P (Bernoulli per pair, ~p·n² pairs, not BigBird's r keys
                       per query), seeded; the diagonal is always kept
    "custom:101/011"   rows of 0/1 written out, '/' between rows
Specs combine with '&' (logical AND): "causal&window:2".
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

# the kinds, their labels and parameters: one registry (mask_kinds.py); this module builds their matrices
from attnviz.engine.mask_kinds import MASK_KINDS
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


def parse_mask(spec, n: int) -> torch.Tensor | None:
    """A mask spec (see the module doc), a bool tensor, or None -> an (n, n) bool mask or None (no mask)."""
    if spec is None:
        return None
    if isinstance(spec, torch.Tensor):
        if spec.dtype != torch.bool:
            raise AttnvizError(f"A mask tensor must be boolean (True = may attend), got dtype {spec.dtype}.")
        if tuple(spec.shape[-2:]) != (n, n):
            raise AttnvizError(f"The mask must be {n}×{n} for {n} tokens, got shape {tuple(spec.shape)}.")
        return spec
    if not isinstance(spec, str):
        raise AttnvizError(f"A mask must be a name such as 'causal', a bool tensor or None, not {type(spec).__name__}.")
    return combine_masks(*(_parse_one(part.strip(), n) for part in spec.split("&")))


def padding_count(spec) -> int:
    """How many [PAD] tokens a spec asks to append (its 'padding:K' part), 0 if none."""
    if not isinstance(spec, str):
        return 0
    total = 0
    for part in spec.split("&"):
        name, _, args = part.strip().partition(":")
        if name.lower() == "padding":
            total += _int_arg("padding", args or "0")
    return total


def _parse_one(part: str, n: int) -> torch.Tensor | None:
    name, _, args = part.partition(":")
    name = name.strip().lower()
    if name in ("", "none", "full", "bidirectional"):
        return None
    if name == "causal":
        return causal_mask(n)
    if name == "padding":
        return key_padding_mask(n, _int_arg(name, args or "0"))
    if name == "window":
        return window_mask(n, _int_arg(name, args))
    if name == "strided":
        return strided_mask(n, _int_arg(name, args))
    if name == "global":
        width, _, tokens = args.partition(":")
        return global_local_mask(n, _int_arg(name, width), _int_list(tokens or "0"))
    if name == "random":
        keep, _, seed = args.partition(":")
        return random_mask(n, _float_arg(name, keep), _int_arg(name, seed or "0"))
    if name == "custom":
        return custom_mask(args, n)
    raise AttnvizError(f"Unknown mask '{name}'. Choose one of: {', '.join(MASK_KINDS)}.")


def _int_arg(name: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise AttnvizError(f"{name}: expected a whole number, got '{text}'.") from None


def _float_arg(name: str, text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise AttnvizError(f"{name}: expected a number, got '{text}'.") from None


def _int_list(text: str) -> list[int]:
    return [_int_arg("global", t) for t in text.split(",") if t.strip()]


def _check_count(name: str, value: int, low: int, high: int | None) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise AttnvizError(f"{name}: the number must be {bound}, got {value}.")
