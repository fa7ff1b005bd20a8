"""Train the two GRU encoder–decoders of the why-attention lesson on numbers in words -> digits, on the CPU.

    python -m attnviz.training.train_gru_seq2seq                        # both shipped models (seed 0)
    python -m attnviz.training.train_gru_seq2seq --which attention      # one of them
    python -m attnviz.training.train_gru_seq2seq --quick --out /tmp/g   # a few steps: CI runs this

attnviz-gru-bottleneck: the decoder sees the source only through z = [→h_S ; ←h_1], one fixed-size vector.
attnviz-gru-attention:  the same model, except that each decoder step reads c_i = Σ_j α_ij h_j, Bahdanau's
additive attention over every source annotation. Same sizes, same data, same steps, same seed.
The equations are in attnviz/engine/gru_seq2seq.py, which runs the saved weights from scratch; the torch
modules here (nn.GRU, nn.Linear) only make training fast and name the weights.
Training is seeded: the same seed, steps, thread count and torch version give the same weights.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnviz.engine.efficient.measure import torch_threads
from attnviz.engine.gru_seq2seq import MODEL_TYPE, GRUConfig, GRUSeq2Seq
from attnviz.paths import MODELS
from attnviz.tasks.accuracy import accuracy_by_length
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

NAMES = {"bottleneck": "attnviz-gru-bottleneck", "attention": "attnviz-gru-attention"}
ASSETS = MODELS
MAX_TOKENS = 96  # source or target tokens, specials included (room to spare: the longest source is about 47)
SHAPE = dict(d_embed=32, d_enc=64, d_dec=128, d_attn=64)
TRAIN = dict(batch=128, lr=3e-3, warmup=100, weight_decay=0.0, clip=1.0)
EVAL_SEED = 10_000  # the held-out set of training.json (the lesson's own set has its own seed)


class Seq2SeqGRU(nn.Module):
    """The training twin of engine/gru_seq2seq.GRUSeq2Seq (same equations, torch's fused GRU kernels)."""

    def __init__(self, vocab_size: int, attention: bool, d_embed: int, d_enc: int, d_dec: int, d_attn: int):
        super().__init__()
        self.attention = attention
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.encoder = nn.GRU(d_embed, d_enc, batch_first=True, bidirectional=True)
        self.init = nn.Linear(2 * d_enc, d_dec)
        self.decoder = nn.GRU(d_embed + 2 * d_enc, d_dec, batch_first=True)  # run one step at a time with attention
        if attention:
            self.attn_query = nn.Linear(d_dec, d_attn, bias=False)  # W_a
            self.attn_key = nn.Linear(2 * d_enc, d_attn)  # U_a, b_a
            self.attn_v = nn.Linear(d_attn, 1, bias=False)  # v
        self.out = nn.Linear(d_dec + 2 * d_enc, vocab_size)

    def forward(self, src, lengths, tgt_in):
        """Teacher-forced logits (B, T, V) for sources src (B, S) of the given lengths and decoder inputs tgt_in (B, T)."""
        S = src.shape[1]
        packed = pack_padded_sequence(self.embed(src), lengths, batch_first=True, enforce_sorted=False)
        out, h_n = self.encoder(packed)  # h_n (2, B, H): →h_S and ←h_1 of each row
        annotations, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # (B, S, 2H), zeros at padding
        summary = torch.cat([h_n[0], h_n[1]], dim=-1)  # z (B, 2H)
        real = torch.arange(S)[None, :] < lengths[:, None]  # (B, S)
        s = torch.tanh(self.init(summary))  # s_0
        keys = self.attn_key(annotations) if self.attention else None  # (B, S, A)
        y_emb = self.embed(tgt_in)  # (B, T, E)
        if not self.attention:  # every decoder input [E[y_{i-1}] ; z] is known up front: one fused GRU call
            context = summary[:, None, :].expand(-1, tgt_in.shape[1], -1)  # (B, T, 2H)
            states, _ = self.decoder(torch.cat([y_emb, context], dim=-1), s[None])  # (B, T, D)
            return self.out(torch.cat([states, context], dim=-1))  # (B, T, V)
        states, contexts = [], []
        d = self.decoder
        weights = (d.weight_ih_l0, d.weight_hh_l0, d.bias_ih_l0, d.bias_hh_l0)  # nn.GRU's own, stepped one at a time
        for i in range(tgt_in.shape[1]):
            energy = self.attn_v(torch.tanh(self.attn_query(s)[:, None, :] + keys))[..., 0]  # e_ij (B, S)
            alpha = torch.softmax(energy.masked_fill(~real, float("-inf")), dim=-1)  # α_ij
            context = torch.bmm(alpha[:, None, :], annotations)[:, 0]  # c_i (B, 2H)
            s = torch.gru_cell(torch.cat([y_emb[:, i], context], dim=-1), s, *weights)  # s_i (B, D), one GRU step
            states.append(s)
            contexts.append(context)
        return self.out(torch.cat([torch.stack(states, 1), torch.stack(contexts, 1)], dim=-1))  # (B, T, V)


def learning_rate(step: int, steps: int) -> float:
    """Linear warm-up, then cosine decay to 0.05 of the rate."""
    return warmup_cosine(step, steps, TRAIN["lr"], TRAIN["warmup"], floor=0.05)


def batch_tensors(tok, examples):
    """(src (B, S), lengths (B,), decoder inputs (B, T), labels (B, T)); labels are -100 at padding."""
    src, lengths = pad_batch([e.ids for e in tok.encode_batch([ex.source for ex in examples])])
    tgt, _ = pad_batch([e.ids for e in tok.encode_batch([ex.target for ex in examples])])  # <s> digits </s> <pad>..
    labels = tgt[:, 1:].masked_fill(tgt[:, 1:] == PAD_ID, -100)
    return src, lengths, tgt[:, :-1], labels


def runner_of(model: Seq2SeqGRU, tok, name: str) -> GRUSeq2Seq:
    """The from-scratch engine model on the current weights (what the lesson runs)."""
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return GRUSeq2Seq(name, gru_config(model.attention), weights, tok)


def gru_config(attention: bool) -> GRUConfig:
    shape = dict(SHAPE, d_attn=SHAPE["d_attn"] if attention else 0)
    return GRUConfig(vocab_size=len(vocabulary()), attention=attention, max_tokens=MAX_TOKENS, bos_id=BOS_ID,
                     pad_id=PAD_ID, eos_id=EOS_ID, **shape)


def train_one(which: str, steps: int, seed: int, out: Path, log_every: int, n_eval: int) -> dict:
    name = NAMES[which]
    torch.manual_seed(seed)
    tok = build_tokenizer(MAX_TOKENS)
    tok.no_truncation()
    model = Seq2SeqGRU(len(vocabulary()), which == "attention", **SHAPE)
    opt = torch.optim.Adam(model.parameters(), lr=TRAIN["lr"])
    gen = torch.Generator().manual_seed(seed)
    start, recent = time.perf_counter(), []
    model.train()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, steps)
        src, lengths, tgt_in, labels = batch_tensors(tok, training_examples(TRAIN["batch"], gen))
        logits = model(src, lengths, tgt_in)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), TRAIN["clip"])
        opt.step()
        recent.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            print(f"{name} step {step + 1:5d}/{steps}  loss {sum(recent) / len(recent):.4f}  "
                  f"{time.perf_counter() - start:5.0f} s", flush=True)
            recent = []
    seconds = time.perf_counter() - start
    model.eval()
    by_length = accuracy_by_length(runner_of(model, tok, name), held_out_examples(n_eval, EVAL_SEED))
    figures = {b.label: {"n": b.n, "exact_match": round(b.accuracy, 4)} for b in by_length}
    total = sum(b.correct for b in by_length) / max(1, sum(b.n for b in by_length))
    print(f"{name}: held-out exact match {total:.1%}; by source words "
          + ", ".join(f"{k}: {v['exact_match']:.1%} (n={v['n']})" for k, v in figures.items())
          + f"; {seconds:.0f} s", flush=True)
    report = {"name": name, "task": "numbers in words -> digits (attnviz/tasks/number_words.py)", "seed": seed,
              "steps": steps, "shape": SHAPE, "attention": which == "attention", "train": TRAIN,
              "final_loss": loss.item(), "held_out": {"seed": EVAL_SEED, "n": n_eval, "exact_match": round(total, 4),
                                                      "by_source_words": figures},
              "seconds": round(seconds, 1), "torch": torch.__version__, "threads": torch.get_num_threads()}
    save(model, tok, out, report)
    return report


def save(model: Seq2SeqGRU, tok, out: Path, report: dict) -> None:
    """config.json + model.safetensors + tokenizer files + training.json."""
    out.mkdir(parents=True, exist_ok=True)
    cfg = gru_config(model.attention)
    config = {"model_type": MODEL_TYPE, **cfg.__dict__}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(out / "model.safetensors"))
    tok.enable_truncation(max_length=MAX_TOKENS)
    write_tokenizer_and_recipe(out, tok, tokenizer_config(MAX_TOKENS), report)
    tok.no_truncation()


def main(argv: list[str] | None = None) -> dict:
    parser = training_parser(__doc__, steps=1200, out=ASSETS, threads=1,
                             out_help="parent folder: each model goes to <out>/<name>")
    parser.add_argument("--which", choices=["both", *NAMES], default="both")
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    steps = 3 if args.quick else args.steps
    n_eval = 32 if args.quick else 1000
    kinds = list(NAMES) if args.which == "both" else [args.which]
    with torch_threads(args.threads):  # called from a test, the script must not leave the process on another count
        return {NAMES[k]: train_one(k, steps, args.seed, args.out / NAMES[k], 1 if args.quick else 100, n_eval)
                for k in kinds}


if __name__ == "__main__":
    main()
