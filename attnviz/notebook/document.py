"""One document of bytes holds everything a notebook widget or a saved HTML file draws: no server is asked later.

Layout: b"AVDC", a JSON head, then the parts, framed as attnviz/draw/payload_frames.py says (each part starts on
a 4-byte boundary, so the browser reads its float32 in place). The head:

    {"title", "subtitle", "notes": [...], "view": "heads" | "model", "parts": count,
     "sets": [{"name", "rows", "cols", "row_labels", "col_labels", "layers": [layer indices], "heads": [head indices],
               "grids": [part of each layer's heads (attnviz/draw/head_grid.py)], "weight_error": [± per grid],
               "opens_at": the index of the layer the viewer shows first,
               "row_stats": [part of each layer's float32 (heads, n_q, 3): row sum, key of the largest, the largest],
               "mosaic": part of the layers × heads thumbnails, "block": [query, key] tokens per thumbnail cell,
               "scores": [part of each layer's Q Kᵀ, float32 (heads, n_q, n_k)] or null, "allowed": part of the
               mask, uint8 (n_q, n_k), 1 = may attend, or null, "scale", "scale_name", "d_head",
               "agreement": max |softmax(scores · scale + M) − the run's weights| over the file, "no_scores": why none}]}

Scores travel only when they fit SCORES_BUDGET (at 512 tokens one layer of 12 heads is 12.6 MB of float32): a
click on a cell then shows its softmax arithmetic; otherwise the document says why it cannot.
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch

from attnviz.draw.describe import scale_name
from attnviz.draw.head_grid import head_grid_payload
from attnviz.draw.heatmap_payload import HEADER, heatmap_payload, precision
from attnviz.draw.payload_frames import wrap
from attnviz.errors import AttnvizError
from attnviz.lessons.model_view import THUMBNAIL_CELLS, pooled_labels
from attnviz.notebook.inputs import AttentionSet, chosen

MAGIC = b"AVDC"
VIEWS = ("heads", "model")
SCORES_BUDGET = 16_000_000  # bytes of float32 scores a document carries with scores="auto"
MAX_CELLS = 120_000_000  # weights in one document (about 120 MB as uint8): past this a browser tab struggles
HEADS_NAME, MODEL_NAME = "attnviz-heads", "attnviz-model"  # the heatmaps' names in the page (tests read them)


def payload_meta(payload: bytes) -> dict:
    """A heatmap payload's JSON block, without decoding its cells."""
    length = HEADER.unpack_from(payload)[-1]
    return json.loads(payload[HEADER.size:HEADER.size + length])


def pool_blocks(a: torch.Tensor, block_rows: int, block_cols: int) -> torch.Tensor:
    """(..., n_q, n_k) -> (..., ⌈n_q/br⌉, ⌈n_k/bc⌉): P[I, J] = mean over the queries i of block I of Σ_{j∈J} a_ij.

    The model view's pooling (attnviz/lessons/model_view.pool_patterns) with blocks of its own size along each
    axis, so a cross-attention (target × source) pools too; pooled rows still sum to what their rows sum to."""
    n_q, n_k = a.shape[-2:]
    m_q, m_k = math.ceil(n_q / block_rows), math.ceil(n_k / block_cols)
    lead = a.shape[:-2]
    padded = a.new_zeros((*lead, m_q * block_rows, m_k * block_cols))
    padded[..., :n_q, :n_k] = a
    keys = padded.reshape(*lead, m_q * block_rows, m_k, block_cols).sum(-1)  # Σ_{j∈J} a_ij  (..., m_q·br, m_k)
    sums = keys.reshape(*lead, m_q, block_rows, m_k).sum(-2)  # Σ_{i∈I} of those  (..., m_q, m_k)
    rows_per_block = torch.clamp(n_q - torch.arange(m_q) * block_rows, max=block_rows).to(a.dtype)  # |I|  (m_q,)
    return sums / rows_per_block[:, None]  # (..., m_q, m_k)


def mosaic_payload(s: AttentionSet, layers: list[int], heads: list[int], attention: str = "") -> tuple[bytes, list[int]]:
    """The layers × heads thumbnails of a set (pooled above THUMBNAIL_CELLS tokens a side), and the blocks.
    attention: the set's name, in the heatmap's name where a document holds several sets."""
    n_q, n_k = s.weights.shape[-2:]
    br, bc = math.ceil(n_q / THUMBNAIL_CELLS), math.ceil(n_k / THUMBNAIL_CELLS)
    chosen_heads = s.weights[layers][:, heads]  # (L', H', n_q, n_k)
    pooled = pool_blocks(chosen_heads, br, bc)  # (L', H', m_q, m_k)
    m_q, m_k = pooled.shape[-2:]
    titles = [f"L{layer} H{head}" for layer in layers for head in heads]
    what = f"{attention}, " if attention else ""
    names = [f"layer {layer}, head {head}" for layer in layers for head in heads]
    pooled_name = None if br == bc == 1 else (
        f"pooled weight: a cell is {br} queries × {bc} keys, the queries' mean of their weights' sum; rows sum to 1",
        "pooled weight")
    payload = heatmap_payload(pooled.reshape(-1, m_q, m_k), pooled_labels(s.row_labels, br),  # (L'·H', m_q, m_k)
                              pooled_labels(s.col_labels, bc), titles=titles, columns=len(heads), thumbnails=True,
                              selectable=True, show_values=False, name=MODEL_NAME, value_name=pooled_name,
                              panel_names=names, label=f"{what}every layer × head: {len(layers)} × {len(heads)} thumbnails")
    return payload, [br, bc]


def row_stats(w: torch.Tensor) -> np.ndarray:
    """(heads, n_q, n_k) weights -> float32 (heads, n_q, 3): each row's sum, its largest weight's key, that weight."""
    largest, at = w.max(dim=-1)  # (H', n_q)
    return torch.stack([w.double().sum(-1).float(), at.float(), largest], dim=-1).numpy().astype("<f4")  # (H', n_q, 3)


def softmax_agreement(s: AttentionSet, layers: list[int], heads: list[int]) -> float:
    """max |softmax(Q Kᵀ · s + M) − the run's weights| over the kept layers and heads, the softmax in float64:
    the click panel recomputes each weight this way, and says how closely that matches what the model computed."""
    worst = 0.0
    for layer in layers:
        z = s.scores[layer][heads].double() * s.scale  # (H', n_q, n_k)
        if s.allowed is not None:
            z = z.masked_fill(~s.allowed, float("-inf"))
        w = torch.softmax(z, dim=-1).nan_to_num(0.0)  # a row with every key masked: zeros, attnviz's rule
        worst = max(worst, float((w - s.weights[layer][heads].double()).abs().max()))
    return worst


def wants_scores(s: AttentionSet, layers: list[int], heads: list[int], scores) -> bool:
    """Whether the document carries the set's scores: scores="auto" when they fit SCORES_BUDGET, True always
    (when the run kept them), False never."""
    if scores not in ("auto", True, False):
        raise AttnvizError(f"scores must be 'auto', True or False, not {scores!r}.")
    if s.scores is None or scores is False:
        return False
    return scores is True or 4 * len(layers) * len(heads) * s.weights.shape[-2] * s.weights.shape[-1] <= SCORES_BUDGET


def set_parts(s: AttentionSet, layers: list[int], heads: list[int], scores, parts: list[bytes],
              attention: str = "") -> dict:
    """Append the set's parts to `parts`; its entry in the document's head. attention: the set's name where the
    document holds several (a screen reader then hears it in each heatmap's name)."""
    def add(payload: bytes) -> int:
        parts.append(payload)
        return len(parts) - 1

    grids, errors = [], []
    for layer in layers:
        grid = head_grid_payload(s.weights[layer], s.row_labels, heads, layer=layer, name=HEADS_NAME,
                                 col_labels=s.col_labels, attention=attention)
        grids.append(add(grid))
        errors.append(precision(payload_meta(grid)))
    # each row's sum and largest weight, from the float32 weights: the cells travel as uint8 at 500 tokens (±0.002),
    # and 500 of them rounded would not add up to the row's true sum
    stats = [add(row_stats(s.weights[layer][heads]).tobytes()) for layer in layers]
    mosaic, block = mosaic_payload(s, layers, heads, attention)
    entry = {"name": s.name, "rows": len(s.row_labels), "cols": len(s.col_labels), "row_labels": s.row_labels,
             "col_labels": s.col_labels, "layers": layers, "heads": heads, "grids": grids, "weight_error": errors,
             "row_stats": stats, "mosaic": add(mosaic), "block": block, "scores": None, "allowed": None, "scale": s.scale,
             "scale_name": None if s.scale is None else scale_name(s.scale, s.d_head), "d_head": s.d_head,
             "agreement": None, "no_scores": s.no_scores}
    if wants_scores(s, layers, heads, scores):
        entry["scores"] = [add(s.scores[layer][heads].contiguous().numpy().astype("<f4").tobytes())  # (H', n_q, n_k)
                           for layer in layers]
        if s.allowed is not None:
            entry["allowed"] = add(s.allowed.numpy().astype(np.uint8).tobytes())  # (n_q, n_k), 1 = may attend
        entry["agreement"] = softmax_agreement(s, layers, heads)
    elif s.scores is not None:
        megabytes = 4 * len(layers) * len(heads) * s.weights.shape[-2] * s.weights.shape[-1] / 1e6
        entry["no_scores"] = (f"The scores of {len(layers)} layer(s) × {len(heads)} head(s) would add {megabytes:.0f} MB "
                              f"to this file (more than {SCORES_BUDGET / 1e6:.0f} MB), so they were left out: pass "
                              "layer= (one layer) or scores=True to keep them.")
    return entry


def document_bytes(sets: list[AttentionSet], *, view: str = "heads", layer=None, heads=None, scores="auto",
                   title: str = "", subtitle: str = "", notes: list[str] | None = None,
                   opens_at: list[int | None] | None = None) -> bytes:
    """The document (see the module text) of `sets` for the layers and heads chosen. opens_at: per set, the layer
    the viewer shows first when that set is picked (None: its first), e.g. a lecture step's layer in its record."""
    if view not in VIEWS:
        raise AttnvizError(f"view must be one of {', '.join(repr(v) for v in VIEWS)}, not {view!r}.")
    chosen_per_set = []
    for s in sets:
        layers = chosen(layer, s.n_layers, "layer")
        chosen_per_set.append((s, layers, chosen(heads, s.n_heads, "head")))
    cells = sum(len(ls) * len(hs) * s.weights.shape[-2] * s.weights.shape[-1] for s, ls, hs in chosen_per_set)
    if cells > MAX_CELLS:
        raise AttnvizError(f"That is {cells:,} weights, more than a browser tab draws well ({MAX_CELLS:,}): choose "
                           "fewer with layer= or heads=.")
    parts: list[bytes] = []
    entries = [set_parts(s, ls, hs, scores, parts, s.name if len(sets) > 1 else "") for s, ls, hs in chosen_per_set]
    for entry, (_, ls, _), first in zip(entries, chosen_per_set, opens_at or [None] * len(sets), strict=True):
        entry["opens_at"] = ls.index(first) if first in ls else 0  # an index into the set's layers
    head = {"title": title, "subtitle": subtitle, "notes": list(notes or []), "view": view, "sets": entries,
            "parts": len(parts)}
    return wrap(MAGIC, head, parts)
