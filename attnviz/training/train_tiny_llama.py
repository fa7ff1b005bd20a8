"""Train attnviz-tiny-llama: a 2-layer Llama-format model (RoPE, GQA) on repeated random words, on the CPU.

    python -m attnviz.training.train_tiny_llama                 # the shipped weights (seed 0)
    python -m attnviz.training.train_tiny_llama --quick --out /tmp/t   # a few steps: CI runs this

The model is transformers' LlamaForCausalLM (so the saved folder is exactly Llama's format) and
attnviz later runs it with its own from-scratch Llama code. Training is seeded: the same seed,
steps and torch version give the same weights. Printed: the training loss, and held-out accuracy
on the second copy of a repeated sequence (what induction makes possible) and on the first copy
(chance: about 1 in 1000) for contrast.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from attnviz.engine.efficient.measure import torch_threads
from attnviz.paths import MODELS
from attnviz.training.saving import write_tokenizer_and_recipe
from attnviz.training.schedule import warmup_cosine
from attnviz.training.script import training_parser
from attnviz.training.tiny_data import (
    BOS_ID,
    PAD_ID,
    build_tokenizer,
    first_word_id,
    repeated_batch,
    tokenizer_config,
    vocabulary,
)

NAME = "attnviz-tiny-llama"
DEFAULT_OUT = MODELS / NAME
MAX_TOKENS = 256
# The recipe (also written to training.json beside the weights).
# initializer_range 0.08 (transformers' default 0.02 suits d_model ~ 768+): at 0.02 the tiny model's attention
# scores start so small that it sits for thousands of steps on a plateau before any head forms.
SHAPE = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=32, rope_theta=1e6, initializer_range=0.08, attention_bias=True)
# attention_bias: q and k get a part that is the same for every word, so a head can attend by position alone
# (RoPE turns that part into a preference for a fixed offset): the previous-token head then forms early, and
# the induction head that needs it follows. head_dim 32 and rope_theta 1e6: most rotary pairs turn slowly, so
# q·k can compare word content at any distance (with head_dim 16 and theta 1e4 only 3 pairs could).
# half: words in the repeated block; prefix: random words before it; copies: how often the block repeats.
# first_words: a curriculum. Until step `until`, the random words come from the `words` most common ones only:
# with 1,000 words the model sits on a plateau (it learns "some word seen before", ~5 nats) and never builds the
# copying circuit; with 128 it finds the induction mechanism in under 1,000 steps (loss 3.4 -> 0.7). After that
# the full vocabulary. The (tied) embeddings stay frozen random vectors: a circuit learned on the first 128 random
# vectors then copies any other random vector too (trained embeddings of unseen words would not: tried, loss 6.6).
TRAIN = dict(batch=64, lr=1e-3, warmup=100, weight_decay=0.01, half=(10, 30), prefix=(0, 10), copies=(2, 2),
             loss_on_repeats_only=True, freeze_embeddings=True, embedding_std=0.25,
             first_words=dict(words=128, until=1200))


def llama_config(vocab_size: int):
    return LlamaConfig(vocab_size=vocab_size, max_position_embeddings=MAX_TOKENS, rms_norm_eps=1e-5,
                       tie_word_embeddings=True, bos_token_id=BOS_ID, pad_token_id=PAD_ID, eos_token_id=None,
                       hidden_act="silu", mlp_bias=False, **SHAPE)


def learning_rate(step: int, steps: int) -> float:
    """Linear warm-up, then cosine decay to 0.1 of the rate."""
    return warmup_cosine(step, steps, TRAIN["lr"], TRAIN["warmup"], floor=0.1)


def words_in_play(step: int, vocab_size: int) -> int:
    """The id bound of the words training draws from at this step (see TRAIN's first_words curriculum)."""
    first = TRAIN["first_words"]
    return min(vocab_size, first_word_id() + first["words"]) if step < first["until"] else vocab_size


def sample_batch(vocab_size: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, labels), both (batch, 1 + prefix + copies*half). Labels are -100 (no loss) where nothing in the
    context can predict the token: [BOS], the random prefix, the first copy and the first word of the second.
    Training only on predictable tokens removes pure noise from the gradient, and induction forms sooner."""
    half = int(torch.randint(TRAIN["half"][0], TRAIN["half"][1] + 1, (1,), generator=gen))
    prefix = int(torch.randint(TRAIN["prefix"][0], TRAIN["prefix"][1] + 1, (1,), generator=gen))
    copies = int(torch.randint(TRAIN["copies"][0], TRAIN["copies"][1] + 1, (1,), generator=gen))
    ids = repeated_batch(TRAIN["batch"], half, prefix, vocab_size, gen, copies)  # (batch, 1 + prefix + copies*half)
    labels = ids.clone()
    if TRAIN["loss_on_repeats_only"]:
        labels[:, : 1 + prefix + half + 1] = -100
    return ids, labels


def scored_loss(model, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over the scored positions only; the LM head runs only there (half the cost)."""
    hidden = model.model(input_ids=ids).last_hidden_state  # (B, T, C)
    keep = labels[:, 1:] != -100  # (B, T-1): position t predicts token t+1
    logits = model.lm_head(hidden[:, :-1][keep])  # (n_scored, V)
    return torch.nn.functional.cross_entropy(logits, ids[:, 1:][keep])


@torch.no_grad()
def halves_accuracy(model, vocab_size: int, seed: int, n_rows: int = 256, half: int = 30) -> dict:
    """Held-out accuracy of greedy next-word prediction on [BOS] A A (A = `half` fresh random words).

    Scored: words 2..half of each copy (the first word of a copy has nothing before it to go on).
    second: the repeated copy, predictable by induction; first: the fresh copy, chance level.
    """
    ids = repeated_batch(n_rows, half, 0, vocab_size, torch.Generator().manual_seed(seed))  # (rows, 1 + 2*half)
    predicted = model(ids).logits.argmax(-1)  # (rows, 1 + 2*half): prediction for the next position
    hits = predicted[:, :-1] == ids[:, 1:]  # hits[:, p] is about position p + 1
    first = hits[:, 1:half]  # positions 2..half  (A[1..half-1], first copy)
    second = hits[:, half + 1:2 * half]  # positions half+2..2*half (A[1..half-1], second copy)
    return {"first_half": float(first.float().mean()), "second_half": float(second.float().mean())}


def train(steps: int, seed: int, out: Path, log_every: int = 100) -> dict:
    torch.manual_seed(seed)
    vocab = vocabulary()
    model = LlamaForCausalLM(llama_config(len(vocab)))
    # Logits are norm(h) · e_word (tied head): |norm(h)| = sqrt(d_model) = 8, so with embeddings of norm 0.64 (std
    # 0.08) no logit can pass ~5 and the loss cannot fall below ~ln(1000) - 5 while they grow. Start them at norm ~2.
    torch.nn.init.normal_(model.model.embed_tokens.weight, std=TRAIN["embedding_std"])
    model.train()
    if TRAIN["freeze_embeddings"]:
        # The (tied) embeddings stay the random vectors they start as: nearly orthogonal in d_model dimensions, so
        # one matrix W_OV ≈ c·I copies every word at once, instead of 1000 embeddings having to be learned first.
        model.model.embed_tokens.weight.requires_grad_(False)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in trained if p.dim() >= 2]
    no_decay = [p for n, p in trained if p.dim() < 2]  # norms: no weight decay
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=TRAIN["lr"], betas=(0.9, 0.98))
    gen = torch.Generator().manual_seed(seed)
    start, recent = time.perf_counter(), []
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, steps)
        ids, labels = sample_batch(words_in_play(step, len(vocab)), gen)
        loss = scored_loss(model, ids, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            line = f"step {step + 1:5d}/{steps}  loss {sum(recent) / len(recent):.3f}  lr {learning_rate(step, steps):.2e}"
            if (step + 1) % (5 * log_every) == 0:
                model.eval()
                acc = halves_accuracy(model, len(vocab), seed=seed + 20_000, n_rows=64)
                model.train()
                line += f"  held-out accuracy 2nd copy {acc['second_half']:.1%}, 1st {acc['first_half']:.1%}"
            print(f"{line}  {time.perf_counter() - start:5.0f} s", flush=True)
            recent = []
    model.eval()
    accuracy = halves_accuracy(model, len(vocab), seed=seed + 10_000)
    seconds = time.perf_counter() - start
    print(f"held-out accuracy: second (repeated) copy {accuracy['second_half']:.1%}, "
          f"first copy {accuracy['first_half']:.1%} (chance {1 / 1000:.1%}); {seconds:.0f} s", flush=True)
    report = {"name": NAME, "seed": seed, "steps": steps, "shape": SHAPE, "train": TRAIN,
              "final_loss": loss.item(), "held_out_accuracy": accuracy, "seconds": round(seconds, 1),
              "torch": torch.__version__, "threads": torch.get_num_threads()}
    save(model, out, report)
    return report


def save(model, out: Path, report: dict) -> None:
    """config.json + model.safetensors (transformers' own writer) + tokenizer files + training.json."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)  # safetensors is transformers' only format in 5.x
    write_tokenizer_and_recipe(out, build_tokenizer(MAX_TOKENS), tokenizer_config(MAX_TOKENS), report)


def main(argv: list[str] | None = None) -> dict:
    args = training_parser(__doc__, steps=2500, out=DEFAULT_OUT, threads=2).parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with torch_threads(args.threads):  # called from a test, the script must not leave the process on another count
        steps = 5 if args.quick else args.steps
        return train(steps, args.seed, args.out, log_every=1 if args.quick else 100)


if __name__ == "__main__":
    main()
