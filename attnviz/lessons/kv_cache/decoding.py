"""The KV-cache lesson: greedy decoding with and without the cache, one step at a time.

At step i the context holds n = n_prompt + i tokens. The newest token's query q (one row per head)
meets the keys of all n tokens; with a cache, the n - 1 earlier keys and values are read from memory
and only the newest k, v are computed:

    a = softmax(q · Kᵀ / √d_head)   (1 × n)        out = a · V   (1 × d_head)

Shapes: nh query heads, nkv K/V heads (GQA: each serves nh / nkv query heads), hs = d_head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError

MAX_NEW = 64  # the page's slider: new tokens to step through


def writes_text(model) -> bool:
    """True for a causal language model (it has a next-token head): one that can decode, cache and copy."""
    return not model.is_encoder_decoder and model.cfg.causal and model.lm_head is not None


# What the models attnviz trained were trained for, said beside what they write (attnviz/training).
TRAINED_FOR = {
    "attnviz-tiny-llama": "was trained on nothing but blocks of random words written twice: given a block and the start "
                          "of its repeat, it continues the copy (that is what it learned), and on ordinary sentences "
                          "it writes little sense",
}


def trained_for(model_name: str) -> str:
    """'attnviz-tiny-llama was trained on …' for a model attnviz trained itself, '' for any other."""
    what = TRAINED_FOR.get(model_name)
    return f"{model_name} {what}." if what else ""


def require_causal(model) -> None:
    """A clear message (not a traceback) for an encoder such as the bundled BERT."""
    if not writes_text(model):
        raise AttnvizError(
            f"{model.name} is an encoder: it reads the whole text at once and never writes text token by token, "
            f"so it has no KV cache. Pick a causal model: tiny-llama (attnviz's own, "
            f"offline), or GPT-2 / a Llama, Qwen2 or Mistral folder under 'other'.")


def decode_both(model, prompt: str, max_new_tokens: int):
    """(with the cache, recomputing everything): two greedy generations of the same request."""
    require_causal(model)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens <= MAX_NEW:
        raise AttnvizError(f"Step through 1 to {MAX_NEW} new tokens, not {max_new_tokens!r}.")
    return (model.generate(prompt, max_new_tokens=max_new_tokens, cache=True),
            model.generate(prompt, max_new_tokens=max_new_tokens, cache=False))


@dataclass
class Agreement:
    same_tokens: bool
    max_abs_difference: float  # over every step's attention row, every layer and head
    n_steps: int


def agreement(cached, full) -> Agreement:
    """How far cached decoding is from full recomputation: the same tokens, rows equal up to float rounding."""
    diff = max(float((a.attention - b.attention).abs().max()) for a, b in zip(cached.steps, full.steps, strict=True))
    return Agreement(cached.token_ids == full.token_ids, diff, len(cached.steps))


@dataclass
class StepView:
    """One decoding step in one layer, seen from one query head and the K/V head it reads."""

    step: int
    layer: int
    head: int
    kv_head: int
    labels: list[str]  # the n context tokens (keys)
    query: torch.Tensor  # (1, hs): the newest token's query, after RoPE
    keys: torch.Tensor  # (n, hs): the cache's keys for this K/V head, after RoPE (last row = just added)
    values: torch.Tensor  # (n, hs)
    scaled_scores: torch.Tensor  # (1, n): q · Kᵀ / √hs
    weights: torch.Tensor  # (1, n): the attention row the generation kept
    recomputed_difference: float  # |softmax(scaled scores) - kept row|, max: the row really comes from q and K
    new_token: str


def step_view(model, cached, step: int, layer: int, head: int) -> StepView:
    """What the cache holds at `step` and how the newest query uses it (from the cached generation)."""
    if not 0 <= step < len(cached.steps):
        raise AttnvizError(f"Step {step} does not exist: this generation has {len(cached.steps)} steps.")
    s = cached.steps[step]
    n = s.n_context
    group = model.n_heads // model.n_kv_heads
    kv_head = head // group  # query heads h of one group share K/V head h // group
    keys = cached.kv[layer].k[0, kv_head, :n]  # (n, hs)
    values = cached.kv[layer].v[0, kv_head, :n]  # (n, hs)
    query = newest_query(model, cached.token_ids[:n], layer, head)  # (1, hs)
    scaled = query @ keys.T / math.sqrt(model.d_head)  # (1, n)
    kept = s.attention[layer, head][None]  # (1, n)
    diff = float((torch.softmax(scaled, dim=-1) - kept).abs().max())
    return StepView(step, layer, head, kv_head, cached.labels[:n], query, keys, values, scaled, kept, diff, s.label)


def newest_query(model, ids: list[int], layer: int, head: int) -> torch.Tensor:
    """(1, hs): the last token's query in `layer`, `head`, after RoPE (a kept forward over the context)."""
    x = torch.tensor([ids], device=model.device)  # (1, n)
    with torch.inference_mode():
        _, _, traces = model.forward(x, None, True, True)  # the model's own (causal) mask
    return traces[layer].q[0, head, -1:].float().cpu()  # (1, hs)


def step_times(generation) -> tuple[list[int], list[float]]:
    """(context length, ms) per step after the first: step 0 with a cache also runs the whole prompt (prefill)."""
    pairs = [(s.n_context, s.ms) for s in generation.steps[1:]]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def median_step_times(model, prompt: str, max_new_tokens: int, cache: bool, repeats: int = 3) -> tuple[list[int], list[float]]:
    """(context length, median ms over `repeats` generations) per step after the first: one busy moment of the
    machine then moves one point, not the whole curve."""
    runs = [step_times(model.generate(prompt, max_new_tokens=max_new_tokens, cache=cache)) for _ in range(repeats)]
    x = runs[0][0]
    return x, [float(torch.tensor([r[1][i] for r in runs]).median()) for i in range(len(x))]
