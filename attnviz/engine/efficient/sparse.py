"""Sparse attention that computes only the allowed pairs: a sliding window, Longformer's global + local,
and block-sparse layouts (BigBird-like). Each equals dense attention with the matching mask, but the
scores it computes, and the memory it holds, grow like n·w instead of n².

A dense implementation with a −∞ mask still computes all n² scores and then throws most away. Here
the queries are cut into blocks of B rows; a block only ever meets the keys it may see:

    sliding window   block t (positions tB .. tB+B−1) meets keys tB−w .. tB+B−1+w: a chunk of B + 2w,
                     gathered for every block at once with `unfold` (a strided view, no copy)
    global + local   the same band, plus the g global keys as extra columns; the g global queries
                     attend densely (g rows of n)
    block-sparse     a (n/B × n/B) layout of allowed blocks; each query block gathers only its key blocks,
                     and the wide (global) query blocks score all keys in a pass of their own

Memory: scores (n/B) · B · (B + 2w) = n (B + 2w) for the window; for a block layout g·B·n for g global
query blocks plus B² for every other allowed block pair.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attnviz.engine.attention import additive_mask, masked_softmax, resolve_scale
from attnviz.engine.efficient._checks import check_knob, check_self_attention
from attnviz.errors import AttnvizError


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int,
                             scale: bool | float | None = None, block_size: int | None = None,
                             causal: bool = False) -> torch.Tensor:
    """softmax(Q Kᵀ · s + M) V with M allowing |i − j| ≤ window (and j ≤ i if causal), band by band.

    Equal to dense attention with attnviz.engine.masks.window_mask(n, window). q, k (..., n, d_k), v (..., n, d_v).
    block_size B defaults to max(window // 2, 16): each block of B queries scores B + 2·window keys.
    """
    n = check_self_attention(q, k, v, "Sliding-window attention")
    w = check_knob("The window", window, 0, None)
    w = min(w, n - 1)  # a window wider than the text is the whole text
    scores, allowed, v_chunks, n_pad = _band_scores(q, k, v, w, block_size, resolve_scale(scale, q.shape[-1]), causal)
    # M as an additive bias (0 allowed, −inf forbidden), added in place: every real query sees at least itself,
    # so no row is all −inf and the softmax needs no NaN clean-up
    scores += additive_mask(allowed, scores.dtype)  # (..., nb, B, B + 2w)
    out = torch.softmax(scores, dim=-1) @ v_chunks  # (..., nb, B, d_v)
    return out.flatten(-3, -2)[..., :n, :]  # (..., n, d_v)


def global_local_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int, global_tokens,
                           scale: bool | float | None = None, block_size: int | None = None) -> torch.Tensor:
    """Longformer: a sliding window of `window` plus global tokens that see all keys and are seen by all queries.

    Equal to dense attention with attnviz.engine.masks.global_local_mask(n, window, global_tokens).
    """
    n = check_self_attention(q, k, v, "Global + local attention")
    w = min(check_knob("The window", window, 0, None), n - 1)
    glob = sorted({int(g) for g in global_tokens})
    for g in glob:
        if not 0 <= g < n:
            raise AttnvizError(f"Global token {g} is outside the sequence (0 to {n - 1}).")
    s = resolve_scale(scale, q.shape[-1])
    band, allowed, v_chunks, n_pad = _band_scores(q, k, v, w, block_size, s, causal=False)
    nb, B = band.shape[-3], band.shape[-2]
    if glob:
        idx = torch.tensor(glob, device=q.device)
        k_g, v_g = k[..., idx, :], v[..., idx, :]  # (..., g, d_k), (..., g, d_v)
        q_pad = F.pad(q, (0, 0, 0, n_pad - n))  # (..., n_pad, d_k)
        g_scores = (q_pad * s) @ k_g.transpose(-2, -1)  # every query against the g global keys (..., n_pad, g)
        g_scores = g_scores.unflatten(-2, (nb, B))  # (..., nb, B, g)
        # a global key inside the query's window is already a band column: count it once
        rows = torch.arange(n_pad, device=q.device).unsqueeze(1)  # (n_pad, 1)
        g_allowed = ((rows - idx.unsqueeze(0)).abs() > w).unflatten(0, (nb, B))  # (nb, B, g)
        band = torch.cat([band, g_scores.expand(*band.shape[:-1], len(glob))], dim=-1)  # (..., nb, B, B + 2w + g)
        allowed = torch.cat([allowed.expand(nb, B, allowed.shape[-1]), g_allowed], dim=-1)
    weights = masked_softmax(band, allowed)
    out = weights[..., : v_chunks.shape[-2]] @ v_chunks  # local part (..., nb, B, d_v)
    if glob:
        out = out + weights[..., v_chunks.shape[-2]:] @ v_g.unsqueeze(-3)  # + the global keys' part
    out = out.flatten(-3, -2)[..., :n, :]  # (..., n, d_v)
    if glob:
        # the g global queries attend to every key: g dense rows of n, not n × n
        g_weights = torch.softmax((q[..., idx, :] * s) @ k.transpose(-2, -1), dim=-1)  # (..., g, n)
        out = out.clone()
        out[..., idx, :] = g_weights @ v
    return out


def band_block_size(n: int, w: int, block_size: int | None = None) -> int:
    """B, the queries in one band of the window kernels: block_size if given, else max(w // 2, 16); at most n."""
    B = check_knob("The block size", block_size, 1, None) if block_size is not None else max(w // 2, 16)
    return min(B, n)


def band_scores_count(n: int, window: int, block_size: int | None = None) -> int:
    """The scores q·k the sliding-window kernel computes for n tokens: nb bands of B queries × (B + 2w) keys,
    the last band padded (w capped at n − 1, as the kernel caps it)."""
    w = min(window, n - 1)
    B = band_block_size(n, w, block_size)
    return -(-n // B) * B * (B + 2 * w)


def global_local_scores_count(n: int, window: int, n_global: int, block_size: int | None = None) -> int:
    """The scores global_local_attention computes: the band, + every (padded) query against the g global keys,
    + the g global query rows against all n keys."""
    w = min(window, n - 1)
    B = band_block_size(n, w, block_size)
    g = min(n_global, n)
    return band_scores_count(n, window, block_size) + -(-n // B) * B * g + g * n


def wide_query_blocks(layout: torch.Tensor) -> torch.Tensor:
    """(nb,) bool: the query blocks block_sparse_attention scores against all n keys (more than half the key
    blocks allowed: BigBird's global rows) rather than by gathering their key blocks."""
    return 2 * layout.sum(-1) > layout.shape[-1]


def block_sparse_scores_count(layout: torch.Tensor, block_size: int, n: int) -> int:
    """The scores block_sparse_attention computes: B·n per wide query block, B·B per allowed block of the others."""
    B = min(block_size, n)
    wide = wide_query_blocks(layout)
    return int(wide.sum()) * B * n + int(layout.sum(-1)[~wide].sum()) * B * B


def _band_scores(q, k, v, w: int, block_size: int | None, s: float, causal: bool):
    """Scores of each query block against its chunk of B + 2w keys, the band mask, and the value chunks.

    -> scores (..., nb, B, B + 2w), allowed (nb, B, B + 2w), v_chunks (..., nb, B + 2w, d_v), n_pad = nb·B.
    """
    n = q.shape[-2]
    B = band_block_size(n, w, block_size)
    nb = -(-n // B)  # number of query blocks, the last one padded
    n_pad = nb * B
    span = B + 2 * w  # keys one block meets: w before its first query, w after its last
    q_blocks = F.pad(q * s, (0, 0, 0, n_pad - n)).unflatten(-2, (nb, B))  # (..., nb, B, d_k)
    # keys padded by w on the left (and to n_pad + w on the right) so chunk t starts at key tB − w
    k_pad = F.pad(k, (0, 0, w, n_pad - n + w))  # (..., n_pad + 2w, d_k)
    v_pad = F.pad(v, (0, 0, w, n_pad - n + w))  # (..., n_pad + 2w, d_v)
    k_chunks = k_pad.unfold(-2, span, B)  # (..., nb, d_k, B + 2w): unfold puts the window last, as Kᵀ wants
    v_chunks = v_pad.unfold(-2, span, B).transpose(-2, -1)  # (..., nb, B + 2w, d_v)
    scores = q_blocks @ k_chunks  # (..., nb, B, B + 2w)
    r = torch.arange(B, device=q.device).view(B, 1)  # query offset inside its block  (B, 1)
    c = torch.arange(span, device=q.device).view(1, span)  # key offset inside the chunk (1, B + 2w)
    rel = c - w - r  # key position − query position                                     (B, B + 2w)
    band = (rel.abs() <= w) & (rel <= 0) if causal else rel.abs() <= w
    key_pos = torch.arange(nb, device=q.device).view(nb, 1) * B - w + c  # (nb, B + 2w)
    inside = (key_pos >= 0) & (key_pos < n)  # the padding keys are never attended by a real query
    padded_query = (torch.arange(n_pad, device=q.device) >= n).view(nb, B, 1)  # (nb, B, 1): rows cut off at the end
    # a padding query (its row is dropped) may see padding keys, so that no row is left with nothing at all
    allowed = band.unsqueeze(0) & (inside.unsqueeze(1) | padded_query)  # (nb, B, B + 2w)
    return scores, allowed, v_chunks, n_pad


# ---- block-sparse ------------------------------------------------------------------------------


def block_sparse_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, layout: torch.Tensor, block_size: int,
                           scale: bool | float | None = None) -> torch.Tensor:
    """Attention where query block a may attend to key block b iff layout[a, b]; only those blocks are computed.

    layout: bool (nb, nb) with nb = ⌈n / block_size⌉, any pattern. Equal to dense attention with
    layout_mask(layout, block_size, n). A query block whose layout row is empty gets zero outputs (the
    engine's policy for fully masked rows).

    Two passes, as Longformer handles its global tokens:
      1) wide query blocks (more than half the key blocks allowed: BigBird's global rows) score all n keys
         directly, g·B rows of n: gathering their blocks would copy K and V once per row block;
      2) every other query block gathers exactly its own c allowed key blocks: the blocks are grouped by c,
         so no row is padded to the widest one (one global block would otherwise pad every row to nb).
    Scores held: g·B·n + Σ_a c_a·B², against n² for dense attention.
    """
    n = check_self_attention(q, k, v, "Block-sparse attention")
    B = min(check_knob("The block size", block_size, 1, None), n)
    nb = -(-n // B)
    layout = _check_layout(layout, nb)
    n_pad = nb * B
    q_blocks = F.pad(q * resolve_scale(scale, q.shape[-1]), (0, 0, 0, n_pad - n)).unflatten(-2, (nb, B))  # (..., nb, B, d_k)
    k_blocks = F.pad(k, (0, 0, 0, n_pad - n)).unflatten(-2, (nb, B))  # (..., nb, B, d_k)
    v_blocks = F.pad(v, (0, 0, 0, n_pad - n)).unflatten(-2, (nb, B))  # (..., nb, B, d_v)
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    out = q.new_zeros(*batch, nb, B, v.shape[-1])  # (..., nb, B, d_v): an empty layout row stays 0
    counts = layout.sum(-1)  # (nb,) key blocks each query block may see

    # 1) wide query blocks against all n keys: S = Q_a Kᵀ, M = the layout row spread over its B·B tokens
    is_wide = wide_query_blocks(layout)  # (nb,)
    wide = torch.nonzero(is_wide).flatten()  # (g,)
    if len(wide):
        scores = q_blocks[..., wide, :, :] @ k.transpose(-2, -1).unsqueeze(-3)  # (..., g, B, n)
        rows = layout[wide]  # (g, nb)
        if bool(rows.all()):  # global rows see every key: a plain softmax
            weights = torch.softmax(scores, dim=-1)
        else:
            allowed = rows.repeat_interleave(B, dim=-1)[:, :n].unsqueeze(1).to(q.device)  # (g, 1, n)
            weights = masked_softmax(scores, allowed)
        out[..., wide.to(q.device), :, :] = weights @ v.unsqueeze(-3)  # (..., g, B, d_v)

    # 2) the other query blocks, a group per count c: each block meets exactly its c key blocks
    narrow = (counts > 0) & ~is_wide
    for c in sorted(set(counts[narrow].tolist())):
        group = torch.nonzero(narrow & (counts == c)).flatten()  # (r,) query blocks with c key blocks
        idx = torch.nonzero(layout[group])[:, 1].view(len(group), c)  # (r, c) their key blocks, row by row
        group, idx = group.to(q.device), idx.to(q.device)
        k_gathered = k_blocks[..., idx, :, :].flatten(-3, -2)  # (..., r, c·B, d_k): only the allowed blocks
        v_gathered = v_blocks[..., idx, :, :].flatten(-3, -2)  # (..., r, c·B, d_v)
        scores = q_blocks[..., group, :, :] @ k_gathered.transpose(-2, -1)  # (..., r, B, c·B)
        key_pos = (idx.unsqueeze(-1) * B + torch.arange(B, device=q.device)).flatten(-2)  # (r, c·B)
        if bool((key_pos >= n).any()):  # the last block's padding keys: never attended
            # every group that meets the last block meets at least one real key there, so no row is left empty
            weights = masked_softmax(scores, (key_pos < n).unsqueeze(1))  # (r, 1, c·B) broadcast over B
        else:
            weights = torch.softmax(scores, dim=-1)
        out[..., group, :, :] = weights @ v_gathered  # (..., r, B, d_v)
    return out.flatten(-3, -2)[..., :n, :]  # (..., n, d_v)


def _check_layout(layout, nb: int) -> torch.Tensor:
    if not isinstance(layout, torch.Tensor) or layout.dtype != torch.bool:
        raise AttnvizError("A block layout must be a boolean tensor (True = this block pair is computed).")
    if tuple(layout.shape) != (nb, nb):
        raise AttnvizError(f"The block layout must be {nb}×{nb} (⌈n / block size⌉ blocks), got {tuple(layout.shape)}.")
    return layout.cpu()


def bigbird_layout(n_blocks: int, local: int = 1, n_global: int = 1, n_random: int = 1, seed: int = 0) -> torch.Tensor:
    """A BigBird-like block layout (n_blocks, n_blocks): a band of ±local blocks, the first n_global blocks
    global (their rows and columns all allowed), and n_random random key blocks per query block, seeded."""
    nb = check_knob("The number of blocks", n_blocks, 1, None)
    local = check_knob("The local band (blocks)", local, 0, None)
    n_global = check_knob("The global blocks", n_global, 0, nb)
    n_random = check_knob("The random blocks", n_random, 0, None)
    a = torch.arange(nb)
    layout = (a.view(-1, 1) - a.view(1, -1)).abs() <= local  # (nb, nb) band
    layout[:n_global, :] = True
    layout[:, :n_global] = True
    generator = torch.Generator().manual_seed(int(seed))
    for row in range(nb):
        picks = torch.randperm(nb, generator=generator)[: min(n_random, nb)]
        layout[row, picks] = True
    return layout


def layout_mask(layout: torch.Tensor, block_size: int, n: int) -> torch.Tensor:
    """The (n, n) token mask a block layout stands for: each block entry repeated B × B, cut to n."""
    B = check_knob("The block size", block_size, 1, None)
    full = layout.repeat_interleave(B, dim=0).repeat_interleave(B, dim=1)  # (nb·B, nb·B)
    return full[:n, :n]
