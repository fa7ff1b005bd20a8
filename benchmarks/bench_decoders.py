"""Llama-family decoder speed: our forward against transformers eager, and generation with and without the KV cache.

    python benchmarks/bench_decoders.py              # a tiny random Llama built here (GQA, saved with save_pretrained)
    python benchmarks/bench_decoders.py FOLDER       # any Llama/Qwen2/Mistral folder (e.g. the trained model)
    python benchmarks/bench_decoders.py --threads 1  # torch threads (default: torch's own choice)

Forward: Model.forward(ids, causal mask) against transformers' eager forward with output_attentions=True,
same ids, same process, one call of each in turn so that both see the same machine state; median of
per-run ratios (target <= 1.0). Two of ours: keep=False is what `model.run` (the explorer, every heatmap)
does; keep=True also keeps every layer's intermediates for the lesson pages, which costs fresh memory
(page faults) on every call rather than transformers' reuse of freed buffers, so it is printed apart. Wall time and this process's
CPU time are both printed: on a machine shared with other jobs wall time also measures the wait for a core,
so CPU time (with --threads 1, free of idle-thread spinning) is the fairer comparison there.
Generation: ms per new token of model.generate at a context of 32, 128 and 512 tokens, with the cache
(only the new token runs; the prefill is reported apart) and without it (the whole context every step),
next to transformers' greedy generate (its own cache, eager) at the same context.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

import transformers
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoModel, AutoModelForCausalLM
from transformers.utils import logging

import attnviz
from attnviz.engine.kv_cache import FLOAT32_BYTES, kv_cache_bytes_per_token

SIZES = (16, 64, 256, 512)
RUNS = {16: 31, 64: 31, 256: 21, 512: 15}  # enough that one noisy run on a shared 2-core machine cannot move the median
CONTEXTS = (32, 128, 512)
NEW_TOKENS = 9  # step 0 is the prefill with the cache; steps 1..8 are the per-token figure
GEN_RUNS = 3
WARMUP = 2
TINY = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, intermediate_size=688,
            max_position_embeddings=1024, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
VOCAB = 512


def build_tiny_llama(folder: Path) -> Path:
    """A random Llama (4 layers, 8 heads over 2 K/V heads, d_model 256) + a word-level tokenizer: 'w17' is one token."""
    vocab = {"<unk>": 0, **{f"w{i}": i for i in range(1, VOCAB)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=VOCAB, **TINY)
    transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").save_pretrained(folder)
    return folder


def ids_of_length(n: int, vocab: int) -> torch.Tensor:
    return torch.randint(1, vocab, (1, n), generator=torch.Generator().manual_seed(n))  # (1, n)


def prompt_of_length(model, n: int) -> str:
    """A prompt of exactly n tokens: word-level 'wK' words for the tiny model, else repeated text cut by token count."""
    if model.tokenizer.backend.token_to_id("w1") is not None:
        return " ".join(f"w{int(i)}" for i in ids_of_length(n, VOCAB)[0])
    words = ("the quick brown fox jumps over the lazy dog " * n).split()
    for k in range(n, 0, -1):
        text = " ".join(words[:k])
        if len(model.encode(text).ids) <= n:
            return text
    raise SystemExit("cannot build a prompt")


def alternate(fns: dict, runs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(wall ms, CPU ms) of each call of each function, called in turn so that drifts in machine load hit all alike."""
    for fn in fns.values():
        for _ in range(WARMUP):
            fn()
    wall, cpu = {name: [] for name in fns}, {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            wall[name].append((time.perf_counter() - start) * 1000)
            cpu[name].append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def paired_ratio(mine: list[float], theirs: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def sizes_for(model) -> list[int]:
    """SIZES that fit the model's positions (the trained model takes 256), its own limit added when some are cut."""
    fit = [n for n in SIZES if n <= model.max_tokens]
    return fit if model.max_tokens in fit or len(fit) == len(SIZES) else fit + [model.max_tokens]


def contexts_for(model) -> list[int]:
    """CONTEXTS that leave room for NEW_TOKENS more, the longest that does standing in for those that do not."""
    room = model.max_tokens - NEW_TOKENS
    return sorted({min(n, room) for n in CONTEXTS})


def forward_table(ours, theirs) -> list[tuple]:
    """(tokens, wall ms ours, theirs, ratio, CPU ms ours, theirs, CPU ratio, kept wall ms, kept ratio) per size."""
    rows = []
    for n in sizes_for(ours):
        ids = ids_of_length(n, ours.embedder.word.shape[0])

        def our_forward(ids=ids, keep=False):
            with torch.inference_mode():
                return ours.forward(ids, ours.builtin_mask(ids.shape[1]), True, keep=keep)

        def their_forward(ids=ids):
            with torch.inference_mode():
                return theirs(input_ids=ids, output_attentions=True)

        fns = {"ours": our_forward, "kept": lambda: our_forward(keep=True), "theirs": their_forward}
        wall, cpu = alternate(fns, RUNS.get(n, RUNS[max(RUNS)]))
        med = lambda t, who: statistics.median(t[who])
        rows.append((n, med(wall, "ours"), med(wall, "theirs"), paired_ratio(wall["ours"], wall["theirs"]),
                     med(cpu, "ours"), med(cpu, "theirs"), paired_ratio(cpu["ours"], cpu["theirs"]),
                     med(wall, "kept"), paired_ratio(wall["kept"], wall["theirs"])))
    return rows


def generation_table(ours, their_lm) -> list[tuple[int, float, float, float, float]]:
    """(context, prefill ms, cached ms/token, uncached ms/token, transformers ms/token) per context length."""
    rows = []
    for n in contexts_for(ours):
        prompt = prompt_of_length(ours, n)
        n_prompt = len(ours.encode(prompt).ids)
        prefill, cached, full, hf = [], [], [], []
        ours.generate(prompt, max_new_tokens=2)  # warm-up
        for _ in range(GEN_RUNS):
            g = ours.generate(prompt, max_new_tokens=NEW_TOKENS, cache=True)
            prefill.append(g.steps[0].ms)
            cached += [s.ms for s in g.steps[1:]]
            g = ours.generate(prompt, max_new_tokens=NEW_TOKENS, cache=False)
            full += [s.ms for s in g.steps[1:]]
            ids = torch.tensor([g.prompt_ids])
            with torch.inference_mode():
                # their per-token time: (N new tokens - 1 new token) / (N - 1), so that the prefill cancels out
                one = _timed(lambda ids=ids: their_lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=1,
                                                               do_sample=False, eos_token_id=[], pad_token_id=0))
                many = _timed(lambda ids=ids: their_lm.generate(ids, attention_mask=torch.ones_like(ids),
                                                                max_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=[],
                                                                pad_token_id=0))
            hf.append((many - one) / (NEW_TOKENS - 1))
        rows.append((n_prompt, statistics.median(prefill), statistics.median(cached), statistics.median(full),
                     statistics.median(hf)))
    return rows


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> int:
    logging.set_verbosity_error()  # loading the bare AutoModel from a causal-LM folder reports the unused lm_head

    args = sys.argv[1:]
    if "--threads" in args:
        i = args.index("--threads")
        torch.set_num_threads(int(args[i + 1]))
        del args[i : i + 2]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args[0]) if args else build_tiny_llama(Path(tmp))
        ours = attnviz.load_model(str(folder), device="cpu")
        theirs = AutoModel.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32).eval()
        their_lm = AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32).eval()
        print(f"attnviz decoder benchmark: {ours.family} '{ours.name}', {ours.n_layers} layers, {ours.n_heads} heads over "
              f"{ours.n_kv_heads} K/V heads, d_model {ours.d_model}, d_head {ours.d_head}; float32, CPU")
        print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}")
        if hasattr(os, "getloadavg"):
            print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("\nforward: ours = Model.forward(ids, causal mask) as model.run does; kept = the same with keep=True "
              "(every intermediate kept);\ntransformers = eager, output_attentions=True")
        runs = ", ".join(f"{RUNS.get(n, RUNS[max(RUNS)])}@{n}" for n in sizes_for(ours))
        print(f"median of {runs} runs after {WARMUP} warm-ups; ratio = median of "
              "per-run ratios")
        print(f"{'tokens':>6} | {'ours wall ms':>12} | {'theirs wall ms':>14} | {'ratio':>5} | {'ours CPU ms':>11} | "
              f"{'theirs CPU ms':>13} | {'CPU ratio':>9} | {'kept wall ms':>12} | {'kept ratio':>10}")
        worst = worst_wall = worst_kept = 0.0
        for n, a, b, r, ca, cb, cr, ka, kr in forward_table(ours, theirs):
            worst, worst_wall, worst_kept = max(worst, cr), max(worst_wall, r), max(worst_kept, kr)
            print(f"{n:>6} | {a:>12.2f} | {b:>14.2f} | {r:>5.2f} | {ca:>11.2f} | {cb:>13.2f} | {cr:>9.2f} | "
                  f"{ka:>12.2f} | {kr:>10.2f}")
        print(f"worst ratio: wall {worst_wall:.2f}, CPU {worst:.2f} (target <= 1.0); kept, wall {worst_kept:.2f}")

        print(f"\ngeneration, greedy, ms per new token (median over {GEN_RUNS} runs x {NEW_TOKENS - 1} tokens after the first);")
        print("prefill = the prompt's one pass that fills the cache; transformers = greedy generate, its own cache, eager")
        print(f"{'context':>7} | {'prefill ms':>10} | {'cached ms/tok':>13} | {'no cache ms/tok':>15} | {'speed-up':>8} | "
              f"{'transformers ms/tok':>19}")
        for n, pre, cached, full, hf in generation_table(ours, their_lm):
            print(f"{n:>7} | {pre:>10.2f} | {cached:>13.2f} | {full:>15.2f} | {full / cached:>7.1f}x | {hf:>19.2f}")
        kv = kv_cache_bytes_per_token(ours.n_layers, ours.n_kv_heads, ours.d_head, FLOAT32_BYTES)
        mha = kv_cache_bytes_per_token(ours.n_layers, ours.n_heads, ours.d_head, FLOAT32_BYTES)
        print(f"\nKV cache per token (float32): {kv} bytes with {ours.n_kv_heads} K/V heads; {mha} if every head had its own")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
