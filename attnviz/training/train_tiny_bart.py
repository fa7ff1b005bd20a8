"""Train attnviz-tiny-bart: a 2+2-layer BART on numbers in words -> digits, on the CPU.

    python -m attnviz.training.train_tiny_bart                  # the shipped weights (seed 0)
    python -m attnviz.training.train_tiny_bart --quick --out /tmp/b   # a few steps: CI runs this

The model is transformers' BartForConditionalGeneration, saved with save_pretrained (safetensors), so the
folder is exactly BART's format; attnviz runs it with its own from-scratch BART code
(`attnviz.load_model("attnviz-tiny-bart")`). The task and the held-out split are those of the GRU models
(attnviz/tasks/number_words.py). Training is seeded: the same seed, steps, thread count and torch version
give the same weights. Printed: the loss, then greedy exact match on held-out sources.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch
from transformers import BartConfig, BartForConditionalGeneration

from attnviz.engine.efficient.measure import torch_threads
from attnviz.paths import MODELS
from attnviz.tasks.accuracy import LENGTH_BINS
from attnviz.tasks.number_words import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    build_tokenizer,
    held_out_examples,
    pad_batch,
    tokenizer_config,
    training_examples,
    vocabulary,
)
from attnviz.training.saving import write_tokenizer_and_recipe
from attnviz.training.schedule import warmup_cosine
from attnviz.training.script import training_parser

NAME = "attnviz-tiny-bart"
DEFAULT_OUT = MODELS / NAME
MAX_TOKENS = 96  # room to spare: the task's longest source is about 47 tokens, its longest target about 32
# init_std 0.06 (transformers' default 0.02 suits d_model ~ 768): in a trial run at 0.02 the tiny model sat for ~500
# steps on a plateau (loss ~1.85) before the loss fell; at 0.06 it fell within the first 300 steps.
SHAPE = dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
             encoder_ffn_dim=256, decoder_ffn_dim=256, init_std=0.06)
TRAIN = dict(batch=128, lr=2e-3, warmup=150, weight_decay=0.01)
EVAL_SEED = 10_000


def bart_config():
    return BartConfig(vocab_size=len(vocabulary()), max_position_embeddings=MAX_TOKENS, dropout=0.0,
                      attention_dropout=0.0, activation_dropout=0.0, activation_function="gelu",
                      scale_embedding=False, pad_token_id=PAD_ID, bos_token_id=BOS_ID, eos_token_id=EOS_ID,
                      decoder_start_token_id=EOS_ID, forced_eos_token_id=None, tie_word_embeddings=True, **SHAPE)


def learning_rate(step: int, steps: int) -> float:
    """Linear warm-up, then cosine decay to 0.05 of the rate."""
    return warmup_cosine(step, steps, TRAIN["lr"], TRAIN["warmup"], floor=0.05)


def batch_tensors(tok, examples):
    """(source ids (B, S), attention mask (B, S), decoder input ids (B, T), labels (B, T)).

    labels = the tokenized target '<s> digits </s>'; the decoder input is it shifted right behind </s>, BART's
    decoder_start_token_id (what transformers' shift_tokens_right and attnviz's run(source, target=...) build)."""
    src, lengths = pad_batch([e.ids for e in tok.encode_batch([ex.source for ex in examples])])
    tgt, _ = pad_batch([e.ids for e in tok.encode_batch([ex.target for ex in examples])])
    mask = (torch.arange(src.shape[1])[None, :] < lengths[:, None]).long()
    decoder_in = torch.cat([torch.full((tgt.shape[0], 1), EOS_ID), tgt[:, :-1]], dim=1)
    return src, mask, decoder_in, tgt.masked_fill(tgt == PAD_ID, -100)


@torch.no_grad()
def greedy(model, src: torch.Tensor, mask: torch.Tensor, max_len: int) -> torch.Tensor:
    """Greedy decoding with transformers' model (the reference): (B, ≤max_len) ids after the start token."""
    encoder_out = model.get_encoder()(input_ids=src, attention_mask=mask)
    ids = torch.full((src.shape[0], 1), EOS_ID)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model(encoder_outputs=encoder_out, attention_mask=mask, decoder_input_ids=ids).logits[:, -1]
        nxt = logits.argmax(-1).masked_fill(done, PAD_ID)
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        done |= nxt == EOS_ID
        if done.all():
            break
    return ids[:, 1:]


def exact_match(model, tok, examples, batch: int = 250) -> list[bool]:
    """True where the greedy output is exactly '<s> digits </s>' of the target."""
    hits = []
    for start in range(0, len(examples), batch):
        chunk = examples[start:start + batch]
        src, mask, _, labels = batch_tensors(tok, chunk)
        out = greedy(model, src, mask, labels.shape[1] + 1).tolist()
        for row, want in zip(out, labels.tolist(), strict=True):
            want = [t for t in want if t != -100]
            hits.append(row[:len(want)] == want)
    return hits


def held_out_report(model, tok, n: int) -> dict:
    examples = held_out_examples(n, EVAL_SEED)
    hits = exact_match(model, tok, examples)
    by_words = {}
    for low, high in LENGTH_BINS:
        inside = [h for ex, h in zip(examples, hits, strict=True) if low <= ex.n_words <= high]
        by_words[f"{low}–{high}"] = {"n": len(inside), "exact_match": round(sum(inside) / max(1, len(inside)), 4)}
    return {"seed": EVAL_SEED, "n": n, "exact_match": round(sum(hits) / len(hits), 4), "by_source_words": by_words}


def train(steps: int, seed: int, out: Path, log_every: int = 100, n_eval: int = 1000) -> dict:
    torch.manual_seed(seed)
    tok = build_tokenizer(MAX_TOKENS)
    tok.no_truncation()
    model = BartForConditionalGeneration(bart_config())
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=TRAIN["lr"], betas=(0.9, 0.98))
    gen = torch.Generator().manual_seed(seed)
    start, recent = time.perf_counter(), []
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, steps)
        src, mask, decoder_in, labels = batch_tensors(tok, training_examples(TRAIN["batch"], gen))
        loss = model(input_ids=src, attention_mask=mask, decoder_input_ids=decoder_in, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            print(f"step {step + 1:5d}/{steps}  loss {sum(recent) / len(recent):.4f}  lr {learning_rate(step, steps):.2e}"
                  f"  {time.perf_counter() - start:5.0f} s", flush=True)
            recent = []
    seconds = time.perf_counter() - start
    model.eval()
    held_out = held_out_report(model, tok, n_eval)
    print(f"held-out greedy exact match {held_out['exact_match']:.1%} (n={n_eval}); by source words "
          + ", ".join(f"{k}: {v['exact_match']:.1%}" for k, v in held_out["by_source_words"].items())
          + f"; {seconds:.0f} s", flush=True)
    report = {"name": NAME, "task": "numbers in words -> digits (attnviz/tasks/number_words.py)", "seed": seed,
              "steps": steps, "shape": SHAPE, "train": TRAIN, "final_loss": loss.item(), "held_out": held_out,
              "seconds": round(seconds, 1), "torch": torch.__version__, "threads": torch.get_num_threads()}
    save(model, tok, out, report)
    return report


def save(model, tok, out: Path, report: dict) -> None:
    """config.json + model.safetensors (transformers' own writer) + tokenizer files + training.json."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)  # safetensors is transformers' only format in 5.x
    tok.enable_truncation(max_length=MAX_TOKENS)
    write_tokenizer_and_recipe(out, tok, tokenizer_config(MAX_TOKENS), report)


def main(argv: list[str] | None = None) -> dict:
    args = training_parser(__doc__, steps=3000, out=DEFAULT_OUT, threads=1).parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    quick = args.quick
    with torch_threads(args.threads):  # called from a test, the script must not leave the process on another count
        return train(5 if quick else args.steps, args.seed, args.out, log_every=1 if quick else 100,
                     n_eval=20 if quick else 1000)


if __name__ == "__main__":
    main()
