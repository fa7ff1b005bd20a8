"""Efficient attention against exact attention: exact kernels equal it, approximations converge to it."""

import pytest
import torch

import attnviz
import attnviz.efficient as public
from attnviz.engine import efficient as engine
from attnviz.engine.attention import scaled_dot_product_attention
from attnviz.engine.efficient import (
    bigbird_layout,
    block_sparse_attention,
    global_local_attention,
    layout_mask,
    linformer_attention,
    performer_attention,
    reformer_attention,
    shared_qk_attention,
    sliding_window_attention,
)
from attnviz.engine.efficient.measure import peak_tensor_bytes
from attnviz.engine.masks import causal_mask, global_local_mask, window_mask
from attnviz.errors import AttnvizError

ATOL = 1e-5


def qkv(*shape, seed: int = 0, amp: float = 1.0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(*shape, generator=g) for _ in range(3))
    return q * amp, k * amp, v


def exact(q, k, v, mask=None, scale=None):
    return scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)[0]


def rel_error(out, ref) -> float:
    return float((out - ref).norm() / ref.norm())


# ---- tiled exact attention (the contract attnviz.efficient.flash_attention) ---------------------------


@pytest.mark.parametrize("block", [1, 5, 16, 37, 64, 100])
def test_tiled_equals_exact_for_tile_sizes_that_do_and_do_not_divide_n(block):
    q, k, v = qkv(2, 3, 37, 8)
    torch.testing.assert_close(attnviz.efficient.flash_attention(q, k, v, block_size=block), exact(q, k, v),
                               atol=ATOL, rtol=0)


@pytest.mark.parametrize("block", [4, 7, 64])
def test_tiled_with_causal_and_arbitrary_masks_and_a_fully_masked_row(block):
    q, k, v = qkv(2, 23, 8, seed=1)
    arbitrary = torch.rand(23, 23, generator=torch.Generator().manual_seed(2)) < 0.3
    arbitrary[5] = False  # a query that may attend to nothing
    for mask in (causal_mask(23), arbitrary, causal_mask(23) & arbitrary):
        out = attnviz.efficient.flash_attention(q, k, v, mask=mask, block_size=block)
        torch.testing.assert_close(out, exact(q, k, v, mask), atol=ATOL, rtol=0)
        assert not out.isnan().any()
    assert float(attnviz.efficient.flash_attention(q, k, v, mask=arbitrary, block_size=block)[..., 5, :].abs().max()) == 0.0


def test_tiled_causal_flag_and_broadcast_mask_and_custom_scales():
    q, k, v = qkv(3, 2, 19, 8, seed=3)
    torch.testing.assert_close(attnviz.efficient.flash_attention(q, k, v, causal=True, block_size=6),
                               exact(q, k, v, causal_mask(19)), atol=ATOL, rtol=0)
    key_mask = torch.ones(19, dtype=torch.bool)
    key_mask[-4:] = False  # padding keys, given as (1, n_k)
    for scale in (True, False, 0.3, None):
        out = attnviz.efficient.flash_attention(q, k, v, mask=key_mask.view(1, 19), scale=scale, block_size=8)
        torch.testing.assert_close(out, exact(q, k, v, key_mask.view(1, 19), scale), atol=ATOL, rtol=0)


def test_tiled_handles_different_query_and_key_lengths():
    g = torch.Generator().manual_seed(4)
    q, k, v = torch.randn(2, 9, 8, generator=g), torch.randn(2, 30, 8, generator=g), torch.randn(2, 30, 5, generator=g)
    torch.testing.assert_close(attnviz.efficient.flash_attention(q, k, v, block_size=8), exact(q, k, v), atol=ATOL, rtol=0)


def test_tiled_memory_grows_like_n_not_n_squared():
    """Peak tensor bytes: 4× the tokens is ~4× the memory for tiling but ~16× for dense attention."""
    small, large = qkv(1, 256, 16), qkv(1, 1024, 16)
    tiled = [peak_tensor_bytes(lambda t=t: attnviz.efficient.flash_attention(*t, block_size=128)) for t in (small, large)]
    dense = [peak_tensor_bytes(lambda t=t: exact(*t)) for t in (small, large)]
    assert tiled[1] / tiled[0] < 5 and dense[1] / dense[0] > 12
    assert tiled[1] < dense[1] / 20


# ---- sparse kernels: equal to masked dense --------------------------------------------------------------


@pytest.mark.parametrize("window, block", [(0, None), (1, 4), (3, None), (3, 7), (10, 5), (36, None), (100, 8)])
def test_sliding_window_equals_masked_dense(window, block):
    q, k, v = qkv(2, 3, 37, 8, seed=5)
    out = sliding_window_attention(q, k, v, window, block_size=block)
    torch.testing.assert_close(out, exact(q, k, v, window_mask(37, min(window, 36))), atol=ATOL, rtol=0)


def test_causal_sliding_window_equals_masked_dense():
    q, k, v = qkv(2, 29, 8, seed=6)
    out = sliding_window_attention(q, k, v, 4, block_size=6, causal=True)
    torch.testing.assert_close(out, exact(q, k, v, window_mask(29, 4) & causal_mask(29)), atol=ATOL, rtol=0)


def test_window_grows_to_exact_attention():
    q, k, v = qkv(2, 40, 8, seed=7)
    errors = [rel_error(sliding_window_attention(q, k, v, w), exact(q, k, v)) for w in (2, 8, 20, 39)]
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-6


@pytest.mark.parametrize("globals_", [[0], [0, 17, 36], [], [3, 4]])
def test_global_local_equals_longformer_mask(globals_):
    q, k, v = qkv(2, 37, 8, seed=8)
    out = global_local_attention(q, k, v, 3, globals_, block_size=5)
    torch.testing.assert_close(out, exact(q, k, v, global_local_mask(37, 3, globals_)), atol=ATOL, rtol=0)


@pytest.mark.parametrize("block", [4, 6, 8, 37])
def test_block_sparse_equals_masked_dense_with_an_empty_block_row(block):
    q, k, v = qkv(2, 37, 8, seed=9)
    nb = -(-37 // block)
    layout = bigbird_layout(nb, local=1, n_global=1, n_random=1, seed=3)
    if nb > 2:
        layout[2] = False  # a query block with no key blocks at all: zeros
    out = block_sparse_attention(q, k, v, layout, block)
    torch.testing.assert_close(out, exact(q, k, v, layout_mask(layout, block, 37)), atol=ATOL, rtol=0)
    if nb > 2:
        assert float(out[..., 2 * block:3 * block, :].abs().max()) == 0.0


@pytest.mark.parametrize("n, block, n_global, n_random", [(64, 4, 2, 2), (61, 8, 1, 3), (37, 5, 3, 1), (50, 7, 2, 0)])
def test_block_sparse_with_bigbird_layouts_global_and_random_blocks_equals_masked_dense(n, block, n_global, n_random):
    q, k, v = qkv(2, n, 8, seed=16)
    layout = bigbird_layout(-(-n // block), local=1, n_global=n_global, n_random=n_random, seed=n)
    for scale in (None, False, 0.3):
        out = block_sparse_attention(q, k, v, layout, block, scale=scale)
        torch.testing.assert_close(out, exact(q, k, v, layout_mask(layout, block, n), scale), atol=ATOL, rtol=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_block_sparse_with_any_random_layout_and_fully_masked_rows_gives_zeros_not_nan(seed):
    """Random layouts: rows of every width (some wider than half, some empty), the last block padded."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = qkv(3, 45, 8, seed=17 + seed)
    layout = torch.rand(8, 8, generator=g) < torch.rand(8, 1, generator=g)  # each row its own density
    layout[1] = False  # a query block that may attend to nothing
    layout[2, :7] = True  # a wide row that is not all True: scored against all keys, masked
    layout[2, 7] = False
    out = block_sparse_attention(q, k, v, layout, 6)
    torch.testing.assert_close(out, exact(q, k, v, layout_mask(layout, 6, 45)), atol=ATOL, rtol=0)
    assert not out.isnan().any() and float(out[..., 6:12, :].abs().max()) == 0.0


def test_block_sparse_broadcasts_batch_dimensions_and_takes_unbatched_inputs():
    q, k, v = qkv(2, 3, 30, 8, seed=20)
    layout = bigbird_layout(5, n_global=1, n_random=1, seed=1)
    mask = layout_mask(layout, 6, 30)
    out = block_sparse_attention(q, k[:1], v[:1], layout, 6)
    torch.testing.assert_close(out, exact(q, k[:1].expand_as(k), v[:1].expand_as(v), mask), atol=ATOL, rtol=0)
    torch.testing.assert_close(block_sparse_attention(q[0, 0], k[0, 0], v[0, 0], layout, 6),
                               exact(q[0, 0], k[0, 0], v[0, 0], mask), atol=ATOL, rtol=0)


def test_block_sparse_with_a_global_block_holds_less_than_dense_attention():
    """One global block used to pad every query block to all nb key blocks: more memory than dense."""
    n, block = 1024, 4  # the page's layout and default block size
    q, k, v = qkv(1, n, 64, seed=21)
    layout = bigbird_layout(n // block, local=1, n_global=1, n_random=1, seed=0)
    sparse = peak_tensor_bytes(lambda: block_sparse_attention(q, k, v, layout, block))
    dense = peak_tensor_bytes(lambda: exact(q, k, v, layout_mask(layout, block, n)))
    assert sparse < dense / 2, (sparse, dense)  # 0.3× here, gathered K and V included (n·c·d, linear in n)


# ---- approximations converge to exact -------------------------------------------------------------------


def test_linformer_with_pooled_projections_converges_and_is_exact_at_rank_n():
    q, k, v = qkv(2, 64, 8, seed=10, amp=0.7)
    errors = [rel_error(linformer_attention(q, k, v, r), exact(q, k, v)) for r in (4, 16, 32, 64)]
    assert errors == sorted(errors, reverse=True), errors
    assert errors[-1] < 1e-5 and errors[0] > 0.05


def test_linformer_random_projections_are_seeded():
    q, k, v = qkv(64, 8, seed=11)
    a, b = (linformer_attention(q, k, v, 16, projection="random", seed=s) for s in (1, 1))
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, linformer_attention(q, k, v, 16, projection="random", seed=2))


def test_performer_error_falls_as_features_grow_and_is_small_at_many():
    q, k, v = qkv(2, 64, 16, seed=12, amp=0.5)
    ref = exact(q, k, v)
    errors = [sum(rel_error(performer_attention(q, k, v, m, seed=s), ref) for s in range(3)) / 3 for m in (16, 256, 2048)]
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[2] < 0.08, errors
    assert not performer_attention(q, k, v, 8).isnan().any()


def test_reformer_with_one_bucket_is_exact_shared_qk_attention_and_rounds_help():
    q, _, v = qkv(2, 48, 8, seed=13, amp=2.0)
    ref = shared_qk_attention(q, v)
    for rounds in (1, 3):
        torch.testing.assert_close(reformer_attention(q, v, 1, rounds), ref, atol=ATOL, rtol=0)
    one, many = (sum(rel_error(reformer_attention(q, v, 4, r, seed=s), ref) for s in range(3)) for r in (1, 8))
    assert many < one


def test_reformer_error_falls_as_buckets_go_to_one():
    q, _, v = qkv(2, 64, 8, seed=14, amp=2.0)
    ref = shared_qk_attention(q, v)
    errors = [sum(rel_error(reformer_attention(q, v, b, 2, seed=s), ref) for s in range(3)) for b in (16, 4, 1)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-5, errors


# ---- bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda q, k, v: attnviz.efficient.flash_attention(q, k, v, block_size=0),
    lambda q, k, v: attnviz.efficient.flash_attention(q, k, v, block_size=2.5),
    lambda q, k, v: attnviz.efficient.flash_attention(q, k, v, mask=torch.ones(3, 3)),
    lambda q, k, v: sliding_window_attention(q, k, v, -1),
    lambda q, k, v: global_local_attention(q, k, v, 2, [99]),
    lambda q, k, v: block_sparse_attention(q, k, v, torch.ones(2, 2, dtype=torch.bool), 4),
    lambda q, k, v: linformer_attention(q, k, v, 0),
    lambda q, k, v: linformer_attention(q, k, v, 17),
    lambda q, k, v: linformer_attention(q, k, v, 4, projection="learned"),
    lambda q, k, v: performer_attention(q, k, v, 0),
    lambda q, k, v: performer_attention(q, k, v, 10**6),
    lambda q, k, v: performer_attention(q, k, v, 8, scale=-1.0),
    lambda q, k, v: reformer_attention(q, v, 3),
    lambda q, k, v: reformer_attention(q, v, 32),
    lambda q, k, v: reformer_attention(q, v, 2, n_rounds=0),
])
def test_knobs_out_of_range_raise_attnviz_error(call):
    q, k, v = qkv(16, 8, seed=15)
    with pytest.raises(AttnvizError):
        call(q, k, v)


def test_the_contract_module_re_exports_the_engine():
    assert public.flash_attention is engine.flash_attention is attnviz.efficient.flash_attention
    assert set(engine.__all__) <= set(dir(public))
