"""Greedy generation, token by token, with or without the KV cache, keeping each step's attention row.

Step i feeds the model the context (prompt + the i tokens chosen so far) and picks the token with the
highest logit. The query that chooses it is the last context token's; its attention row over the
n_context = n_prompt + i keys, in every layer and head, is what each step keeps.

    cache=True   the prompt runs once (prefill) and fills each layer's KV cache; afterwards each step runs
                 only the newest token: its q, k, v, with the cached keys and values of all earlier tokens
    cache=False  each step runs the whole context again from scratch (what the cache saves)
Both give the same tokens and the same rows, up to float rounding: the cache only avoids recomputing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from attnviz.engine.kv_cache import KVCache
from attnviz.errors import AttnvizError

MAX_NEW_TOKENS = 256
TOP_K = 5


@dataclass
class GenerationStep:
    """One greedy step: the token chosen and the attention row of the query that chose it."""

    token_id: int
    token: str  # the tokenizer's own string ('Ġcat')
    label: str  # readable ('cat')
    position: int  # where the new token lands in Generation.token_ids
    attention: torch.Tensor  # (n_layers, n_heads, n_context): the last context token's row, n_context = position
    query: torch.Tensor  # (n_layers, n_heads, d_head): that token's query vector in each layer (after RoPE where used)
    top_ids: list[int]  # the TOP_K likeliest next tokens, most likely first (top_ids[0] == token_id)
    top_probs: list[float]  # their softmax probabilities
    ms: float  # wall time of this step (the prefill counts in step 0 with the cache)

    @property
    def n_context(self) -> int:
        return self.attention.shape[-1]


@dataclass
class Generation:
    """What `model.generate` produced. Tensors are float32 on the CPU."""

    model_name: str
    prompt_ids: list[int]
    token_ids: list[int]  # prompt ids + one id per step
    tokens: list[str]
    labels: list[str]
    steps: list[GenerationStep]
    cache: bool
    text: str  # the decoded prompt + continuation
    # cache=True: each layer's final cache (K after RoPE, V; per K/V head) on the CPU. It holds every token but the
    # last one chosen (that one was never fed back); step i used its first n_context keys and values.
    kv: list[KVCache] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_prompt(self) -> int:
        return len(self.prompt_ids)

    @property
    def new_ids(self) -> list[int]:
        return self.token_ids[self.n_prompt :]


def check_generation_request(model, prompt: str, max_new_tokens) -> list[int]:
    """The prompt's ids, or a clear AttnvizError for a model that cannot generate or a request that cannot be met."""
    if not model.cfg.causal:
        raise AttnvizError(f"{model.name} cannot generate here: generation runs decoder-only causal models (GPT-2, Llama, "
                           f"Qwen2, Mistral). An encoder such as BERT reads the whole text at once; it was never trained "
                           f"to predict the next token.")
    if model.lm_head is None:
        raise AttnvizError(f"{model.name} was saved without its language-model head, so it cannot pick next tokens.")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise AttnvizError(f"max_new_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}, got {max_new_tokens!r}.")
    enc = model.encode(prompt)
    n = len(enc.ids)
    if enc.truncated or n >= model.max_tokens:
        raise AttnvizError(f"The prompt is longer than {model.name} can take ({model.max_tokens} tokens): shorten it.")
    if n + max_new_tokens > model.max_tokens:
        raise AttnvizError(f"The prompt has {n} tokens; {max_new_tokens} more would pass {model.name}'s limit of "
                           f"{model.max_tokens}. Ask for at most {model.max_tokens - n} new tokens.")
    return enc.ids


def generate(model, prompt: str, max_new_tokens: int = 20, cache: bool = True) -> Generation:
    """Greedy decoding of `max_new_tokens` tokens after `prompt` (no stop at end-of-text: always that many)."""
    ids = check_generation_request(model, prompt, max_new_tokens)
    n_prompt = len(ids)
    caches = model.new_caches(n_prompt + max_new_tokens) if cache else None
    steps = []
    with torch.inference_mode():
        for i in range(max_new_tokens):
            start = time.perf_counter()
            if caches is None or i == 0:  # the whole context (without a cache, every step; with one, the prefill)
                fed = torch.tensor([ids], device=model.device)  # (1, n_context)
            else:  # only the newest token; the cache holds the rest
                fed = torch.tensor([ids[-1:]], device=model.device)  # (1, 1)
            # the model's own mask alone (causal over the cached tokens and the new ones: forward adds it)
            hidden, weights, traces = model.forward(fed, None, True, True, caches)  # traces: references, no extra work
            logits = model.logits(hidden[0, -1])  # (V,): scores for the next token, from the last position
            probs = torch.softmax(logits.float(), dim=-1)
            top = probs.topk(min(TOP_K, probs.shape[0]))
            next_id = int(logits.argmax())
            row = torch.stack([w[0, :, -1, :] for w in weights]).float().cpu()  # (L, nh, n_context)
            query = torch.stack([t.q[0, :, -1, :] for t in traces]).float().cpu()  # (L, nh, hs)
            ms = (time.perf_counter() - start) * 1000
            token, label = model.tokenizer.token_of(next_id)
            steps.append(GenerationStep(next_id, token, label, len(ids), row, query, top.indices.tolist(),
                                        top.values.float().cpu().tolist(), ms))
            ids = ids + [next_id]
    tokens_labels = [model.tokenizer.token_of(t) for t in ids]
    kv = None if caches is None else [_cache_to_cpu(c) for c in caches]
    return Generation(
        model_name=model.name, prompt_ids=ids[:n_prompt], token_ids=ids, tokens=[t for t, _ in tokens_labels],
        labels=[lb for _, lb in tokens_labels], steps=steps, cache=cache, text=model.tokenizer.decode(ids), kv=kv,
    )


def _cache_to_cpu(c: KVCache) -> KVCache:
    out = KVCache.__new__(KVCache)
    out.k, out.v, out.length = c.keys.float().cpu(), c.values.float().cpu(), c.length
    return out
