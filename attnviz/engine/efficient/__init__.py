"""Efficient attention: exact kernels that skip work, and approximations that change the math.

    flash_attention            exact, tile by tile with an online softmax (tiled.py)
    sliding_window_attention   exact for a window mask, band by band (sparse.py)
    global_local_attention     exact for Longformer's window + global tokens (sparse.py)
    block_sparse_attention     exact for a block layout, block by block (sparse.py)
    linformer_attention        keys and values projected to k rows (linformer.py)
    performer_attention        FAVOR+ positive random features (performer.py)
    reformer_attention         LSH buckets over shared QK (reformer.py)

Conventions as in attnviz.engine.attention: q, k (..., n, d_k), v (..., n, d_v); masks bool, True = may
attend; a fully masked row gives zeros; scale True/None = 1/√d_k, False = 1, a float = that factor.
"""

from attnviz.engine.efficient.linformer import linformer_attention, linformer_projections
from attnviz.engine.efficient.performer import orthogonal_random_features, performer_attention, positive_features
from attnviz.engine.efficient.reformer import (
    lsh_buckets,
    reformer_attention,
    reformer_scores_count,
    shared_keys,
    shared_qk_attention,
)
from attnviz.engine.efficient.sparse import (
    band_scores_count,
    bigbird_layout,
    block_sparse_attention,
    block_sparse_scores_count,
    global_local_attention,
    global_local_scores_count,
    layout_mask,
    sliding_window_attention,
)
from attnviz.engine.efficient.tiled import flash_attention

__all__ = [
    "band_scores_count",
    "bigbird_layout",
    "block_sparse_attention",
    "block_sparse_scores_count",
    "flash_attention",
    "global_local_attention",
    "global_local_scores_count",
    "layout_mask",
    "linformer_attention",
    "linformer_projections",
    "lsh_buckets",
    "orthogonal_random_features",
    "performer_attention",
    "positive_features",
    "reformer_attention",
    "reformer_scores_count",
    "shared_keys",
    "shared_qk_attention",
    "sliding_window_attention",
]
