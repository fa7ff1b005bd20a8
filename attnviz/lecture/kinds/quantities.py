"""What a number question's right answer can be computed as (answer.quantity): one entry each, with the answer
fields it needs and how attnviz computes it for the step's state. The number kind (number.py) reads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from attnviz.errors import AttnvizError
from attnviz.lecture.kinds.base import StepRun, token_position
from attnviz.lessons.scaling.experiments import VARIANCE_SAMPLES, dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID


@dataclass(frozen=True)
class Quantity:
    name: str
    words: str  # what it is, for the docs and a plan's error message
    needs: tuple[str, ...]  # the answer fields it needs (and the only ones it takes besides expected/tolerance)
    compute: Callable[[object, StepRun], tuple[float, str]]  # (spec, step) -> (value, what was computed, in words)


@lru_cache(maxsize=16)
def dot_variance(d_k: int) -> float:
    """Var(q·k) measured at d_k: the Scaling lab's own number when d_k is on its grid (the same seeded run), else the
    same experiment at d_k alone."""
    d_ks = D_K_GRID if d_k in D_K_GRID else (d_k,)
    experiment = dot_product_variance_experiment(d_ks, n_samples=VARIANCE_SAMPLES)
    return float(experiment.unscaled_variance[list(d_ks).index(d_k)])


def weight(spec, step: StepRun) -> tuple[float, str]:
    res = step.run()
    n_layers, n_heads = res.attentions.shape[:2]
    if spec.layer >= n_layers or spec.head >= n_heads:
        raise AttnvizError(f"The plan asks for layer {spec.layer}, head {spec.head}; this model has layers 0 to "
                           f"{n_layers - 1} and heads 0 to {n_heads - 1}.")
    query = token_position(spec.query, res.tokens, "query")
    key = token_position(spec.key, res.tokens, "key")
    value = float(res.attentions[spec.layer, spec.head, query, key])
    return value, (f"the model's weight of '{res.tokens[query]}' (token {query}) on '{res.tokens[key]}' (token {key}), "
                   f"layer {spec.layer}, head {spec.head}")


def variance(spec, step: StepRun) -> tuple[float, str]:
    return dot_variance(spec.d_k), (f"Var(q·k) at d_k = {spec.d_k}, measured over {VARIANCE_SAMPLES} random pairs by "
                                    "the Scaling lab's experiment (theory: d_k)")


def spread(spec, step: StepRun) -> tuple[float, str]:
    return dot_variance(spec.d_k) ** 0.5, (f"the standard deviation of q·k, √Var(q·k), at d_k = {spec.d_k}, measured "
                                           f"over {VARIANCE_SAMPLES} random pairs by the Scaling lab's experiment")


def heads_per_kv(spec, step: StepRun) -> tuple[float, str]:
    model = step.model
    return float(model.n_heads // model.n_kv_heads), (f"{model.name}: {model.n_heads} query heads share "
                                                      f"{model.n_kv_heads} key/value heads")


def new_keys(spec, step: StepRun) -> tuple[float, str]:
    model = step.model
    return float(model.n_kv_heads), (f"{model.name}: one key per key/value head for each new token, in each layer "
                                     f"({model.n_kv_heads} key/value heads)")


QUANTITIES = {q.name: q for q in (
    Quantity("weight", "the model's attention weight of the query token `query` on the key token `key` (their "
             "texts), at `layer` and `head`, for the step's state", ("query", "key", "layer", "head"), weight),
    Quantity("dot_variance", "Var(q·k) of q, k with `d_k` independent N(0, 1) entries, measured (the Scaling lab's "
             "experiment)", ("d_k",), variance),
    Quantity("dot_spread", "the standard deviation of q·k, √Var(q·k), at `d_k`, measured (the Scaling lab's "
             "experiment)", ("d_k",), spread),
    Quantity("heads_per_kv", "how many query heads read each key/value head in the step's model (n_heads / "
             "n_kv_heads)", (), heads_per_kv),
    Quantity("new_keys", "how many keys the step's model computes in each layer for one new token: one per key/value "
             "head (n_kv_heads)", (), new_keys),
)}
