"""The queries of the page: written by hand, each with a name that says what it asks for.

In a captioning model the decoder's hidden state makes the query at every step; here a person writes it, in the
same feature space as the region vectors (steps a, b) or in the key space (step c, see layer.W_K). Its length is
set by a strength s: q = s × the preset's vector. A longer query spreads the scores further apart, and the
softmax then puts more of the weight on the best-matching regions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError
from attnviz.lessons.attention_layer.regions import FEATURES

KEY_FEATURES = ("warmth", "green-ness", "brightness", "height")  # what W_K computes (layer.W_K)
KEY_MEANINGS = {
    "warmth": "red − blue: positive for red, orange and yellow, negative for blue",
    "green-ness": "green − (red + blue)/2: positive where green stands out",
    "brightness": "(red + green + blue)/3",
    "height": "the region's height feature, passed through",
}
MAX_STRENGTH = 50.0


@dataclass(frozen=True)
class Preset:
    name: str
    asks: str  # what the query asks for, in words
    features: tuple[float, ...]  # the query over the region features (red, green, blue, height, across): D numbers
    keys: tuple[float, ...]  # the same wish over the key features (warmth, green-ness, brightness, height): D_k numbers


PRESETS = {p.name: p for p in (
    Preset("sun", "yellow, high up", (1, 1, -2, 1, 0), (1, 0, 1, 1)),
    Preset("sky", "blue, high up", (-1, 0, 1, 1, 0), (-1, 0, 0, 1)),
    Preset("grass", "green, low down", (-1, 1, -1, -1, 0), (0, 1, 0, -1)),
    Preset("water", "blue, low down", (-1, 0, 1, -1, 0), (-1, 0, 0, -1)),
    Preset("house", "red, on the left", (2, -1, -1, 0, -1), (2, 0, -1, -1)),
)}
CUSTOM = "custom"


def check_strength(strength: float) -> float:
    if not (isinstance(strength, int | float) and math.isfinite(strength) and 0 <= strength <= MAX_STRENGTH):
        raise AttnvizError(f"The query strength must be a number from 0 to {MAX_STRENGTH:g}, not {strength!r}.")
    return float(strength)


def parse_vector(text: str, names: tuple[str, ...]) -> torch.Tensor:
    """'1, 1, -2, 1, 0' -> a vector of len(names) numbers (float64), or a clear error naming what is expected."""
    spelled = (text or "").strip()
    wanted = f"{len(names)} numbers, one per feature ({', '.join(names)})"
    if not spelled:
        raise AttnvizError(f"The query is empty: type {wanted}, separated by commas.")
    parts = [p for p in re.split(r"[,\s;]+", spelled) if p]
    try:
        numbers = [float(p.replace("−", "-")) for p in parts]
    except ValueError:
        raise AttnvizError(f"The query '{spelled}' is not a list of numbers: type {wanted}.") from None
    if len(numbers) != len(names):
        raise AttnvizError(f"The query has {len(numbers)} numbers; it needs {wanted}.")
    if not all(math.isfinite(v) and abs(v) <= 100 for v in numbers):
        raise AttnvizError("Each number of the query must be between −100 and 100.")
    return torch.tensor(numbers, dtype=torch.float64)


def feature_query(name: str, strength: float, custom: str = "") -> torch.Tensor:
    """The query over the region features, q = s × the preset's vector (D,); 'custom' reads `custom`."""
    s = check_strength(strength)
    if name == CUSTOM:
        return s * parse_vector(custom, FEATURES)
    return s * torch.tensor(preset(name).features, dtype=torch.float64)  # (D,)


def key_query(name: str, strength: float, custom: str = "") -> torch.Tensor:
    """The query over the key features, q = s × the preset's key-space vector (D_k,); 'custom' reads `custom`."""
    s = check_strength(strength)
    if name == CUSTOM:
        return s * parse_vector(custom, KEY_FEATURES)
    return s * torch.tensor(preset(name).keys, dtype=torch.float64)  # (D_k,)


def preset(name: str) -> Preset:
    if name not in PRESETS:
        raise AttnvizError(f"There is no query named '{name}': pick one of {', '.join(PRESETS)} or {CUSTOM}.")
    return PRESETS[name]


def all_feature_queries(strength: float) -> torch.Tensor:
    """Every preset's query over the region features, stacked (M, D)."""
    return torch.stack([feature_query(name, strength) for name in PRESETS])  # (M, D)


def all_key_queries(strength: float) -> torch.Tensor:
    """Every preset's query over the key features, stacked (M, D_k)."""
    return torch.stack([key_query(name, strength) for name in PRESETS])  # (M, D_k)


def with_query(queries: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """The queries (M, D) with one more row appended (M + 1, D)."""
    return torch.vstack([queries, query.reshape(1, -1)])  # (M + 1, D)
