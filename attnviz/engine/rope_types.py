"""RoPE settings read from a config.json, and the frequencies each rope type gives.

transformers 5 keeps them in `config.rope_parameters` ({"rope_type": "default", "rope_theta": 500000.0});
older folders carry `rope_theta` and `rope_scaling` ({"type": "linear", "factor": 2.0}) at the top level.
Both forms are read here the way transformers' `standardize_rope_params` reads them.

Types: "default" θ_i = theta^(-2i/D); "linear" divides every θ_i by a factor (positions stretched);
"llama3" divides only the slow (long-wavelength) frequencies, leaves the fast ones and blends between.
"""

from __future__ import annotations

import math

import torch

from attnviz.engine.rope import rope_frequencies
from attnviz.errors import AttnvizError

ROPE_TYPES = ("default", "linear", "llama3")
KNOWN_ELSEWHERE = ("dynamic", "yarn", "longrope", "proportional", "mrope")  # transformers has them; we do not
DEFAULT_THETA = 10000.0


def rope_parameters(config: dict) -> dict:
    """The config's RoPE settings as one flat dict with rope_type and rope_theta filled in."""
    params = config.get("rope_scaling") or config.get("rope_parameters") or {}  # rope_scaling wins, as in transformers
    if not isinstance(params, dict) or any(isinstance(v, dict) for v in params.values()):
        raise AttnvizError("This model's config gives RoPE settings per layer type, which attnviz does not model.")
    params = dict(params)
    params.setdefault("rope_type", params.get("type", "default"))
    params.setdefault("rope_theta", config.get("rope_theta") or DEFAULT_THETA)
    if params["rope_type"] == "llama3":
        params.setdefault("original_max_position_embeddings", config.get("max_position_embeddings"))
    return params


def rope_inverse_frequencies(params: dict, d_head: int) -> torch.Tensor:
    """θ_i for i = 0 .. D/2 - 1 (D/2,) for the config's rope type; an unknown type is a clear error."""
    kind = str(params.get("rope_type", "default"))
    if kind not in ROPE_TYPES:
        known = f"'{kind}' is a RoPE type attnviz does not implement" if kind in KNOWN_ELSEWHERE else None
        known = known or f"Unknown RoPE type '{kind}'"
        raise AttnvizError(f"{known}: attnviz runs the RoPE types {', '.join(ROPE_TYPES)}.")
    if float(params.get("partial_rotary_factor", 1.0)) != 1.0:
        raise AttnvizError("This model rotates only part of each head (partial_rotary_factor), which attnviz does not model.")
    inv_freq = rope_frequencies(d_head, float(params["rope_theta"]))
    if kind == "linear":
        return inv_freq / float(_need(params, "factor"))  # θ_i / s: position p turns like position p / s did
    if kind == "llama3":
        return llama3_frequencies(inv_freq, params)
    return inv_freq


def llama3_frequencies(inv_freq: torch.Tensor, params: dict) -> torch.Tensor:
    """Llama 3.1's rule: wavelengths 2π/θ_i longer than L/low are divided by factor, shorter than L/high kept,
    in between blended by how many turns they make in the original context L."""
    factor = float(_need(params, "factor"))
    low, high = float(_need(params, "low_freq_factor")), float(_need(params, "high_freq_factor"))
    old_len = float(_need(params, "original_max_position_embeddings"))
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > old_len / low, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)  # 0 at wavelength L/low, 1 at L/high
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old_len / high) * ~(wavelen > old_len / low)
    return torch.where(medium, blended, scaled)


def _need(params: dict, key: str):
    if params.get(key) is None:
        raise AttnvizError(f"The config's '{params.get('rope_type')}' RoPE settings lack '{key}'.")
    return params[key]
