"""The RNN encoder–decoders that came before the Transformer, written out in plain tensor ops.

Two models with one difference (Cho et al. 2014 vs Bahdanau et al. 2014), both trained by
attnviz/training/train_gru_seq2seq.py on numbers in words -> digits:

    encoder (both)   x_j = E[w_j];  →h_j = GRU_f(x_j, →h_{j-1});  ←h_j = GRU_b(x_j, ←h_{j+1})
                     h_j = [→h_j ; ←h_j]                        the annotation of word j   (2·d_enc)
                     z   = [→h_S ; ←h_1]                        the fixed-size summary     (2·d_enc)
    decoder start    s_0 = tanh(W_init z + b_init)
    context c_i      bottleneck:  c_i = z                       the same vector at every step
                     attention:   e_ij = vᵀ tanh(W_a s_{i-1} + U_a h_j + b_a)
                                  α_ij = softmax_j(e_ij)         one row of the alignment matrix
                                  c_i  = Σ_j α_ij h_j
    decoder step     s_i = GRU_d([E[y_{i-1}] ; c_i], s_{i-1})
    output           p(y_i) = softmax(W_out [s_i ; c_i] + b_out)

A GRU cell (torch.nn.GRU's equations, gates in the order r, z, n):
    r  = σ(W_ir x + b_ir + W_hr h + b_hr)          reset gate
    u  = σ(W_iz x + b_iz + W_hz h + b_hz)          update gate
    n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)) candidate state
    h' = (1 − u) ⊙ n + u ⊙ h

The weights are read from the folder's model.safetensors under the names the training script's
torch modules give them (nn.GRU's weight_ih_l0, weight_ih_l0_reverse, ...), so the
script's torch model and this file compute the same numbers (tests/engine/test_gru_seq2seq.py).
Shapes: B batch, S source tokens, T target tokens, V vocabulary, H = d_enc, D = d_dec, A = d_attn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from attnviz.engine.shipped import GRU, shipped_model, shipped_model_folder, short_names
from attnviz.errors import AttnvizError
from attnviz.tasks.number_words import check_known_words, digits_text

MODEL_TYPE = "attnviz-gru-seq2seq"


@dataclass(frozen=True)
class GRUConfig:
    vocab_size: int
    d_embed: int
    d_enc: int  # per direction: annotations are 2·d_enc wide
    d_dec: int
    d_attn: int  # width of the additive scoring network (0 when attention is off)
    attention: bool  # False: the bottleneck model, the decoder sees only z
    max_tokens: int  # longest source or target the model was made for (the tokenizer cuts there)
    bos_id: int = 0
    pad_id: int = 1
    eos_id: int = 2


@dataclass
class Translation:
    """One greedy translation: what went in, what came out, and (attention model) where it looked."""

    source_tokens: list[str]  # <s> words </s>
    output_tokens: list[str]  # the generated tokens, </s> excluded
    output_text: str  # readable: '342007, 90'
    alignment: torch.Tensor | None  # (n_output, n_source): α_ij, row i = output step, sums to 1; None without attention
    finished: bool  # False when max_len was reached before </s>


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step, the equations of the module docstring. x (B, I), h (B, Hd); w_ih (3Hd, I), w_hh (3Hd, Hd)."""
    gi = x @ w_ih.T + b_ih  # W_i· x + b_i·   for r, u, n at once      (B, 3Hd)
    gh = h @ w_hh.T + b_hh  # W_h· h + b_h·                            (B, 3Hd)
    i_r, i_u, i_n = gi.chunk(3, dim=1)
    h_r, h_u, h_n = gh.chunk(3, dim=1)
    r = torch.sigmoid(i_r + h_r)  # reset gate
    u = torch.sigmoid(i_u + h_u)  # update gate
    n = torch.tanh(i_n + r * h_n)  # candidate state
    return (1 - u) * n + u * h  # (B, Hd)


class GRUSeq2Seq:
    """A trained GRU encoder–decoder (bottleneck or additive attention). Never mutated after loading."""

    def __init__(self, name: str, cfg: GRUConfig, weights: dict[str, torch.Tensor], tokenizer, source: str = ""):
        self.name, self.cfg, self.w, self.tokenizer, self.source = name, cfg, weights, tokenizer, source

    # ---- encoder ---------------------------------------------------------------------------------

    def encode(self, src: torch.Tensor, lengths: torch.Tensor):
        """src (B, S) ids padded at the end, lengths (B,) -> (annotations h (B, S, 2H), summary z (B, 2H)).

        Padded positions leave the state as it was, so each row's backward pass starts at its own last word."""
        w, (B, S) = self.w, src.shape
        x = self.w["embed.weight"][src]  # E[w_j]                                         (B, S, d_embed)
        real = (torch.arange(S)[None, :] < lengths[:, None]).unsqueeze(-1)  # (B, S, 1)
        fwd, bwd = [], [None] * S
        h = x.new_zeros(B, self.cfg.d_enc)
        for j in range(S):  # →h_j = GRU_f(x_j, →h_{j-1})
            h = torch.where(real[:, j], gru_cell(x[:, j], h, w["encoder.weight_ih_l0"], w["encoder.weight_hh_l0"],
                                                 w["encoder.bias_ih_l0"], w["encoder.bias_hh_l0"]), h)
            fwd.append(h)
        h_last = h  # →h_S of each row (the state stopped changing at its last word)
        h = x.new_zeros(B, self.cfg.d_enc)
        for j in reversed(range(S)):  # ←h_j = GRU_b(x_j, ←h_{j+1}); zero until a row's last word
            h = torch.where(real[:, j], gru_cell(x[:, j], h, w["encoder.weight_ih_l0_reverse"],
                                                 w["encoder.weight_hh_l0_reverse"], w["encoder.bias_ih_l0_reverse"],
                                                 w["encoder.bias_hh_l0_reverse"]), h)
            bwd[j] = h
        annotations = torch.cat([torch.stack(fwd, 1), torch.stack(bwd, 1)], dim=-1)  # h_j = [→h_j ; ←h_j] (B, S, 2H)
        annotations = annotations * real  # padded positions: zero (they are never attended to)
        summary = torch.cat([h_last, bwd[0]], dim=-1)  # z = [→h_S ; ←h_1]                     (B, 2H)
        return annotations, summary

    # ---- decoder ---------------------------------------------------------------------------------

    def start_state(self, summary: torch.Tensor) -> torch.Tensor:
        return torch.tanh(summary @ self.w["init.weight"].T + self.w["init.bias"])  # s_0 = tanh(W_init z + b) (B, D)

    def attend(self, s_prev, keys, annotations, real):
        """Bahdanau's additive attention: (c_i (B, 2H), α_i (B, S)). keys = U_a h_j + b_a, precomputed (B, S, A)."""
        query = s_prev @ self.w["attn_query.weight"].T  # W_a s_{i-1}                             (B, A)
        energy = torch.tanh(query[:, None, :] + keys) @ self.w["attn_v.weight"][0]  # e_ij         (B, S)
        energy = energy.masked_fill(~real, float("-inf"))  # padding is no word to look at
        alpha = torch.softmax(energy, dim=-1)  # α_ij                                              (B, S)
        return (alpha[:, :, None] * annotations).sum(1), alpha  # c_i = Σ_j α_ij h_j               (B, 2H)

    def step(self, y_prev, s_prev, memory):
        """One decoder step -> (logits (B, V), s_i (B, D), α_i (B, S) or None). memory = decoder_memory(...)."""
        annotations, summary, keys, real = memory
        if self.cfg.attention:
            context, alpha = self.attend(s_prev, keys, annotations, real)
        else:
            context, alpha = summary, None  # the bottleneck: the same z at every step
        x = torch.cat([self.w["embed.weight"][y_prev], context], dim=-1)  # [E[y_{i-1}] ; c_i]
        s = gru_cell(x, s_prev, self.w["decoder.weight_ih_l0"], self.w["decoder.weight_hh_l0"],
                     self.w["decoder.bias_ih_l0"], self.w["decoder.bias_hh_l0"])  # s_i
        logits = torch.cat([s, context], dim=-1) @ self.w["out.weight"].T + self.w["out.bias"]  # (B, V)
        return logits, s, alpha

    def decoder_memory(self, src: torch.Tensor, lengths: torch.Tensor):
        annotations, summary = self.encode(src, lengths)
        real = torch.arange(src.shape[1])[None, :] < lengths[:, None]  # (B, S)
        keys = None
        if self.cfg.attention:
            keys = annotations @ self.w["attn_key.weight"].T + self.w["attn_key.bias"]  # U_a h_j + b_a (B, S, A)
        return annotations, summary, keys, real

    @torch.inference_mode()
    def teacher_forced_logits(self, src, lengths, tgt_in):
        """Logits (B, T, V) for decoder inputs tgt_in (B, T), as in training (what the parity test compares)."""
        memory = self.decoder_memory(src, lengths)
        s, out = self.start_state(memory[1]), []
        for i in range(tgt_in.shape[1]):
            logits, s, _ = self.step(tgt_in[:, i], s, memory)
            out.append(logits)
        return torch.stack(out, 1)

    @torch.inference_mode()
    def greedy(self, src: torch.Tensor, lengths: torch.Tensor, max_len: int):
        """Greedy decoding of a batch -> (ids (B, ≤max_len) with <pad> after </s>, alignments (B, T, S) or None)."""
        memory = self.decoder_memory(src, lengths)
        B = src.shape[0]
        s = self.start_state(memory[1])
        y = torch.full((B,), self.cfg.bos_id, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        ids, alphas = [], []
        for _ in range(max_len):
            logits, s, alpha = self.step(y, s, memory)
            y = logits.argmax(-1).masked_fill(done, self.cfg.pad_id)
            ids.append(y)
            alphas.append(alpha)
            done |= y == self.cfg.eos_id
            if done.all():
                break
        alignment = torch.stack(alphas, 1) if self.cfg.attention else None
        return torch.stack(ids, 1), alignment

    def translate(self, text: str, max_len: int | None = None) -> Translation:
        """Greedy translation of one source text (the attention model also returns its alignment matrix)."""
        enc = self.tokenizer.encode(text)
        check_known_words(self.tokenizer, text, self.name)
        if len(enc.ids) <= 2:
            raise AttnvizError("Type a number in words, for example 'three hundred forty two'.")
        if len(enc.ids) >= self.cfg.max_tokens:
            raise AttnvizError(f"The text is longer than the {self.cfg.max_tokens - 2} words {self.name} was made for.")
        ids, alignment = self.greedy(torch.tensor([enc.ids]), torch.tensor([len(enc.ids)]),
                                     max_len or self.cfg.max_tokens)
        out = ids[0].tolist()
        finished = self.cfg.eos_id in out
        n = out.index(self.cfg.eos_id) if finished else len(out)
        tokens = [self.tokenizer.id_to_token(i) for i in out[:n]]
        return Translation(list(enc.tokens), tokens, digits_text(tokens),
                           None if alignment is None else alignment[0, :n].clone(), finished)


# ---- loading ------------------------------------------------------------------------------------


def read_gru_folder(folder: Path, name: str | None = None) -> GRUSeq2Seq:
    """A folder written by train_gru_seq2seq (config.json, model.safetensors, tokenizer.json) -> GRUSeq2Seq."""
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise AttnvizError(f"'{folder}' has no readable config.json: {err}") from None
    if config.get("model_type") != MODEL_TYPE:
        raise AttnvizError(f"'{folder}' is not an attnviz GRU encoder–decoder (model_type {config.get('model_type')!r}).")
    fields = {k: config[k] for k in GRUConfig.__dataclass_fields__ if k in config}
    cfg = GRUConfig(**fields)
    weights = {k: v.float() for k, v in load_file(str(folder / "model.safetensors")).items()}
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    return GRUSeq2Seq(name or folder.name, cfg, weights, tokenizer, source=str(folder))


@lru_cache(maxsize=4)
def load_gru_model(name: str) -> GRUSeq2Seq:
    """'attnviz-gru-bottleneck' or 'attnviz-gru-attention' (or their short names 'gru-bottleneck', 'gru-attention'),
    from attnviz/assets/models, SHA-256 checked (cached)."""
    model = shipped_model(name)
    if model is None or model.kind != GRU:
        raise AttnvizError(f"No shipped GRU model '{name}': choose one of {', '.join(short_names(GRU))}.")
    return read_gru_folder(shipped_model_folder(model.name), model.name)
