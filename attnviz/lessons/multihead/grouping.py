"""MHA vs MQA vs GQA: how many K/V heads, what the KV cache costs, and what one layer's patterns
become when its K/V heads are averaged into groups.

MHA: every query head has its own K and V head (n_kv = n_heads). MQA: one K/V head shared by all
(n_kv = 1). GQA: g groups of consecutive query heads share one K/V head each (n_kv = g), as Llama does.

The averaging is an approximation of a model that was never trained that way: we mean-pool the K/V
projection weights (and biases) of the heads in each group, and every query head attends with its
group's shared K/V. Only the chosen layer changes; its input X is the original run's.
Shapes: T tokens, C = d_model, nh query heads, G K/V groups (g the index of one), hs = d_head.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.attention import masked_softmax, repeat_kv
from attnviz.engine.models.stack import RopeLayerTrace
from attnviz.errors import AttnvizError
from attnviz.lessons.multihead.heads import layer_trace
from attnviz.lessons.step_by_step.steps import attention_input

BYTES_PER_VALUE = {"float32": 4, "float16 / bfloat16": 2, "int8": 1}


def n_kv_heads(model) -> int:
    """K/V heads per layer: the model's own count where it has GQA, else one per query head (MHA)."""
    return model.n_kv_heads


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def check_groups(n_heads: int, n_groups) -> int:
    """The group count as an int, or a clear error when it does not split the heads evenly."""
    if isinstance(n_groups, bool) or not isinstance(n_groups, int) or not 1 <= n_groups <= n_heads:
        raise AttnvizError(f"The number of K/V groups must be a whole number from 1 to {n_heads}, not {n_groups!r}.")
    if n_heads % n_groups:
        raise AttnvizError(f"{n_groups} groups do not divide the {n_heads} heads evenly: every group must hold the "
                           f"same number of query heads. Choose one of {', '.join(map(str, divisors(n_heads)))}.")
    return n_groups


def kv_sharing(n_heads: int, n_kv: int) -> list[list[int]]:
    """For each K/V head j, the query heads that read it: j·r .. (j+1)·r − 1 with r = n_heads / n_kv."""
    check_groups(n_heads, n_kv)
    r = n_heads // n_kv
    return [list(range(j * r, (j + 1) * r)) for j in range(n_kv)]


# ---- the KV cache ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Geometry:
    """What the KV cache size depends on."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    decoder: bool = True  # False: an encoder reads its whole text at once, generates nothing and keeps no KV cache


# Published configurations (config.json of each release) to compare against the loaded model.
PUBLISHED = [
    Geometry("GPT-2 small", 12, 12, 12, 64),
    Geometry("Llama-2-7B", 32, 32, 32, 128),
    Geometry("Mistral-7B", 32, 32, 8, 128),
    Geometry("Llama-2-70B", 80, 64, 8, 128),
]


def model_geometry(model) -> Geometry:
    decoder = bool(model.cfg.causal or model.is_encoder_decoder)  # BART's decoder caches too
    return Geometry(f"{model.name} (loaded)", model.n_layers, model.n_heads, n_kv_heads(model), model.d_head, decoder)


def cache_note(geo: Geometry) -> str | None:
    """Said for an encoder, whose KV cache the page would otherwise state as if it had one; None for a decoder."""
    if geo.decoder:
        return None
    return (f"{geo.name.removesuffix(' (loaded)')} is an encoder: it reads the whole text at once and generates "
            "nothing, so it keeps no KV cache (0 bytes). The sizes below are what a decoder of its shape "
            f"({geo.n_layers} layers, {geo.n_kv_heads} K/V heads of d_head {geo.d_head}) would keep.")


def kv_cache_bytes(n_layers: int, n_kv: int, d_head: int, bytes_per_value: int, length: int) -> int:
    """2 (K and V) · n_layers · n_kv_heads · d_head · bytes per value · tokens, for one sequence."""
    return 2 * n_layers * n_kv * d_head * bytes_per_value * length


@dataclass(frozen=True)
class CacheRow:
    variant: str  # "MHA", "GQA", "MQA"
    n_kv_heads: int
    query_heads_per_kv: int
    bytes: int
    fraction_of_mha: float
    is_models_own: bool  # the K/V head count this model was trained with


def kv_cache_rows(geo: Geometry, bytes_per_value: int, length: int) -> list[CacheRow]:
    """One row per possible K/V head count (every divisor of n_heads), MHA first, MQA last."""
    if not isinstance(length, int) or length < 1:
        raise AttnvizError(f"The sequence length must be a whole number of tokens ≥ 1, not {length!r}.")
    mha = kv_cache_bytes(geo.n_layers, geo.n_heads, geo.d_head, bytes_per_value, length)
    rows = []
    for n_kv in sorted(divisors(geo.n_heads), reverse=True):
        variant = "MHA" if n_kv == geo.n_heads else "MQA" if n_kv == 1 else "GQA"
        size = kv_cache_bytes(geo.n_layers, n_kv, geo.d_head, bytes_per_value, length)
        rows.append(CacheRow(variant, n_kv, geo.n_heads // n_kv, size, size / mha, n_kv == geo.n_kv_heads))
    return rows


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


# ---- averaging one layer's K/V heads into groups ------------------------------------------------


@dataclass
class GroupedPatterns:
    n_groups: int
    group_of_head: list[int]  # K/V group each query head reads
    original: torch.Tensor  # the layer's patterns, every head with its own K (nh, T, T)
    grouped: torch.Tensor  # the patterns with K/V heads averaged into n_groups groups (nh, T, T)
    trace_gap: float  # max |original − the run's own weights|: float32 rounding only
    output_change: float  # ‖Δ attention output‖ / ‖attention output‖ of the layer (V averaged too)

    @property
    def max_abs_change(self) -> torch.Tensor:
        """max over query and key of |Δ weight|, per head (nh,)."""
        return (self.grouped - self.original).abs().flatten(1).max(dim=1).values

    @property
    def total_variation(self) -> torch.Tensor:
        """mean over query rows of ½ Σ_j |p_j − p'_j|, per head (nh,): 0 = same row, 1 = no overlap."""
        return 0.5 * (self.grouped - self.original).abs().sum(dim=-1).mean(dim=-1)

    @property
    def kl(self) -> torch.Tensor:
        """mean over query rows of KL(original ‖ grouped) = Σ_j p_j log(p_j / p'_j) in nats, per head (nh,).

        Both rows are zero at the same (masked) keys; terms with p_j = 0 add 0."""
        p, q = self.original, self.grouped
        terms = torch.where(p > 0, p * (p.clamp_min(1e-30).log() - q.clamp_min(1e-30).log()), torch.zeros_like(p))
        return terms.sum(dim=-1).mean(dim=-1)


def grouped_patterns(model, res, layer: int, n_groups) -> GroupedPatterns:
    """`layer`'s patterns with its K/V heads mean-pooled into n_groups groups (see the module docstring)."""
    nh = model.n_heads
    if n_kv_heads(model) != nh:
        raise AttnvizError(f"{model.name} already shares K/V heads ({n_kv_heads(model)} for {nh} query heads): "
                           "its real grouping is shown instead of an averaged one.")
    g = check_groups(nh, n_groups)
    trace = layer_trace(res, layer)
    x = attention_input(model, trace, layer)  # (T, C), LayerNormed first in pre-LN models
    lw = model.layers[layer]
    proj = per_head_projections(lw.w_qkv.detach().float().cpu(), lw.b_qkv.detach().float().cpu(), nh)
    mask = None if trace.mask is None else trace.mask.cpu().bool()
    original, out_orig = attend(x, proj, nh, trace.scale, mask)
    grouped, out_grouped = attend(x, proj, g, trace.scale, mask)
    w_o, b_o = lw.w_o.detach().float().cpu(), lw.b_o.detach().float().cpu()
    y_orig, y_grouped = out_orig @ w_o + b_o, out_grouped @ w_o + b_o  # (T, C) each
    return GroupedPatterns(
        n_groups=g, group_of_head=[h // (nh // g) for h in range(nh)], original=original, grouped=grouped,
        trace_gap=float((original - trace.weights[0]).abs().max()),
        output_change=float((y_grouped - y_orig).norm() / y_orig.norm().clamp_min(1e-12)),
    )


def per_head_projections(w_qkv: torch.Tensor, b_qkv: torch.Tensor, nh: int) -> dict[str, torch.Tensor]:
    """W_Q, W_K, W_V as (nh, C, hs) and their biases as (nh, hs), from the fused (C, 3C) and (3C,)."""
    C = w_qkv.shape[0]
    hs = C // nh
    out = {}
    for name, w, b in zip("QKV", w_qkv.split(C, dim=1), b_qkv.split(C), strict=True):
        out[f"W_{name}"] = w.view(C, nh, hs).transpose(0, 1)  # (nh, C, hs)
        out[f"b_{name}"] = b.view(nh, hs)  # (nh, hs)
    return out


def pool_heads(t: torch.Tensor, g: int) -> torch.Tensor:
    """Mean over the consecutive heads of each group: (nh, ...) -> (g, ...). With g = nh it is t itself."""
    return t.view(g, t.shape[0] // g, *t.shape[1:]).mean(dim=1)  # (g, ...)


def attend(x, proj: dict, g: int, scale: float, mask) -> tuple[torch.Tensor, torch.Tensor]:
    """-> (weights (nh, T, T), Concat of head outputs (T, C)) with K and V pooled into g heads."""
    nh = proj["W_Q"].shape[0]
    q = torch.einsum("tc,hcs->hts", x, proj["W_Q"]) + proj["b_Q"][:, None, :]  # (nh, T, hs)
    k = torch.einsum("tc,gcs->gts", x, pool_heads(proj["W_K"], g)) + pool_heads(proj["b_K"], g)[:, None, :]  # (g, T, hs)
    v = torch.einsum("tc,gcs->gts", x, pool_heads(proj["W_V"], g)) + pool_heads(proj["b_V"], g)[:, None, :]  # (g, T, hs)
    k, v = (repeat_kv(t[None], nh // g)[0] for t in (k, v))  # (nh, T, hs): query head h reads group h // (nh/g)
    weights = masked_softmax(q @ k.transpose(-2, -1) * scale, mask)  # (nh, T, T)
    heads = weights @ v  # (nh, T, hs)
    return weights, heads.transpose(0, 1).reshape(x.shape[0], -1)  # (T, nh·hs)


def sharing_in_trace(res, layer: int) -> tuple[list[int], float]:
    """For each query head, the K/V head whose K and V it actually read in `layer` of a RoPE model's kept run,
    found by comparing the per-query-head K, V (after the GQA repeat) with the K/V heads as cached;
    and the max |difference| of those matches (0: the query heads of a group read the very same K and V)."""
    trace = res.traces[layer]
    if not isinstance(trace, RopeLayerTrace):
        raise AttnvizError("This model keeps one K/V head per query head: nothing is shared.")
    k_q, v_q = trace.k[0], trace.v[0]  # (nh, S, hs): per query head
    k_kv, v_kv = trace.k_cached[0], trace.v_cached[0]  # (nkv, S, hs): per K/V head
    gaps = (k_q[:, None] - k_kv[None]).abs().amax(dim=(2, 3)) + (v_q[:, None] - v_kv[None]).abs().amax(dim=(2, 3))  # (nh, nkv)
    read = gaps.argmin(dim=1)  # (nh,)
    return [int(j) for j in read], float(gaps.gather(1, read[:, None]).max())
