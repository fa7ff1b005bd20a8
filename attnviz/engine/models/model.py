"""The Model that every family loads into, and the RunResult that `model.run` returns.

One Model and one layer loop (Model.forward) for every stack: encoders (BERT-like, toy), GPT-2 and the Llama
family. Where they differ, the loop reads a field of the model's ModelConfig (config.py); the layer itself is
stack.layer_forward.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import torch

from attnviz.engine.attention import resolve_scale
from attnviz.engine.generation import generate
from attnviz.engine.kv_cache import KVCache
from attnviz.engine.mask_kinds import padding_count, parse_mask
from attnviz.engine.mask_rule import NOTHING_MASKED, applied_mask
from attnviz.engine.masks import causal_mask, combine_masks
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.stack import (
    LayerTrace,
    LayerWeights,
    layer_forward,
    layer_norm,
    layer_weights,
    norm,
    sliding_window_mask,
)
from attnviz.engine.models.tokenizer import Encoded
from attnviz.engine.rope import rope_angles
from attnviz.errors import AttnvizError


@dataclass
class Embedder:
    """token embedding + position embedding (+ token type) (+ LayerNorm): ids (B, T) -> x (B, T, C)."""

    word: torch.Tensor  # (V, C)
    position: torch.Tensor | None  # (P, C) a learned or sinusoidal table; None where cfg.positions is "rope" or "none"
    position_offset: int = 0  # RoBERTa numbers positions from padding_idx + 1
    token_type: torch.Tensor | None = None  # (C,) BERT's segment-A embedding
    ln: tuple[torch.Tensor, torch.Tensor] | None = None
    ln_eps: float = 1e-12

    def __call__(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """start: the position of ids[:, 0] (non-zero when earlier tokens sit in a KV cache)."""
        x = self.word[ids]  # (B, T, C)
        if self.position is not None:
            first = self.position_offset + start
            x = x + self.position[first : first + ids.shape[1]]  # (T, C) broadcast over B
        if self.token_type is not None:
            x = x + self.token_type
        if self.ln is not None:
            x = layer_norm(x, self.ln[0], self.ln[1], self.ln_eps)
        return x

    def to(self, device) -> Embedder:
        move = lambda t: None if t is None else t.to(device)
        ln = None if self.ln is None else (move(self.ln[0]), move(self.ln[1]))
        return Embedder(move(self.word), move(self.position), self.position_offset, move(self.token_type), ln, self.ln_eps)


@dataclass
class RunResult:
    """What one run of the model produced. Tensors are float32 on the CPU."""

    tokens: list[str]  # the model's own tokens, specials kept ([CLS] ... [SEP])
    labels: list[str]  # the same tokens made readable for axis labels
    token_ids: list[int]
    attentions: torch.Tensor  # (n_layers, n_heads, n_tokens, n_tokens); rows sum to 1 (0 for fully masked rows)
    mask: torch.Tensor | None  # the (n, n) bool mask applied in every layer (causal included for decoders)
    scale: float  # the factor applied to Q Kᵀ in every layer
    truncated: bool  # the text was longer than the model's maximum and was cut
    n_pad: int = 0  # [PAD] tokens appended at the end by a 'padding:K' mask
    traces: list[LayerTrace] | None = None  # per-layer intermediates (batch dim 1) when asked for
    hidden: torch.Tensor | None = None  # final residual stream (n_tokens, d_model)
    model_name: str = ""
    notes: list[str] = field(default_factory=list)  # things the user should be told


class Model:
    """A from-scratch transformer with pretrained (or seeded) weights. See `attnviz.load_model`."""

    is_encoder_decoder = False  # EncoderDecoderModel (seq2seq.py) adds a decoder with cross-attention

    def __init__(self, name, family, cfg: ModelConfig, embedder: Embedder, layers: list[LayerWeights],
                 tokenizer, final_ln=None, source: str | None = None, device: str = "cpu", lm_head=None):
        if (embedder.position is not None) != (cfg.positions in ("learned", "sinusoidal")):
            raise AttnvizError(f"The embedder's position table does not fit the config's positions '{cfg.positions}'.")
        if (final_ln is not None) != cfg.final_norm:
            raise AttnvizError(f"A final norm is given, or missing, against the config's final_norm={cfg.final_norm}.")
        self.name = name
        self.family = family  # "bert", "roberta", "distilbert", "gpt2", "llama", "qwen2", "mistral", "bart" or "toy"
        self.cfg = cfg
        self.tokenizer = tokenizer
        self.source = source  # the folder the weights came from (None for toy)
        self.device = torch.device(device)
        self.embedder = embedder.to(self.device)
        self.layers = [lw.to(self.device) for lw in layers]
        # (γ, β) of the norm after the last layer (β None for an RMSNorm), or None (cfg.final_norm False)
        self.final_ln = None if final_ln is None else tuple(None if t is None else t.to(self.device) for t in final_ln)
        # RoPE's θ_i (hs/2,) on the model's device, or None when positions are not rotary
        self.inv_freq = cfg.inv_freq.to(self.device) if cfg.positions == "rope" else None
        # the LM head (V, C) that turns the final hidden state into next-token logits; causal models only.
        # Tied to the token embeddings (GPT-2, tied Llamas): the same tensor, not a copy.
        self.lm_head = self.embedder.word if lm_head is embedder.word else (None if lm_head is None else lm_head.to(self.device))

    # -- facts the pages show --------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return self.cfg.n_layers

    @property
    def n_heads(self) -> int:
        return self.cfg.n_heads

    @property
    def d_model(self) -> int:
        return self.cfg.d_model

    @property
    def d_head(self) -> int:
        return self.cfg.d_head

    @property
    def n_kv_heads(self) -> int:
        """K/V heads per layer: n_heads for multi-head attention, fewer under grouped-query attention."""
        return self.cfg.n_kv_heads

    @property
    def shared_window(self) -> int | None:
        """The sliding window when every layer has the same one (Mistral), else None."""
        return self.cfg.shared_window

    @property
    def max_tokens(self) -> int:
        return self.tokenizer.max_tokens

    def per_head_weights(self, layer: int) -> dict[str, torch.Tensor]:
        """W_Q, W_K, W_V [n_heads, d_model, d_head] and W_O [n_heads, d_head, d_model] on the CPU; W_K and W_V
        are given per query head (under GQA the query heads of one group share them), W_K_kv and W_V_kv as
        stored [n_kv_heads, d_model, d_head] (the same as W_K, W_V without GQA)."""
        w = {k: v.cpu() for k, v in self.layers[layer].per_head(self.cfg).items()}
        g = self.cfg.group_size
        return {"W_Q": w["W_Q"], "W_K": w["W_K"].repeat_interleave(g, 0), "W_V": w["W_V"].repeat_interleave(g, 0),
                "W_O": w["W_O"], "W_K_kv": w["W_K"], "W_V_kv": w["W_V"]}

    def to(self, device) -> Model:
        return Model(self.name, self.family, self.cfg, self.embedder, self.layers, self.tokenizer,
                     self.final_ln, self.source, device, lm_head=self._lm_head_source())

    def _lm_head_source(self):
        return self.embedder.word if self.lm_head is self.embedder.word else self.lm_head

    # -- running ---------------------------------------------------------------------------
    def encode(self, text: str, n_pad: int = 0) -> Encoded:
        if not isinstance(text, str) or not text.strip():
            raise AttnvizError("Type some text first: the text is empty.")
        if not any(_is_visible(c) for c in text):  # a byte-level or toy tokenizer would make tokens of them
            raise AttnvizError("The text has only invisible characters (such as zero-width spaces): type some visible words.")
        return self.tokenizer.encode(text, n_pad=n_pad)

    def run(self, text: str, mask=None, scale=True, keep: bool = False, target: str | None = None,
            layers: int | None = None, weights_only: bool = False) -> RunResult:
        """Run the text through every layer with this mask and scale applied inside each attention.

        mask: on top of the model's own (a decoder's causal mask): None/"none" (the model's own alone), a spec such
            as "causal" or "window:3" (see attnviz.engine.mask_kinds), or a bool (n, n) tensor; NOTHING_MASKED: no
            mask at all, not even the model's own (attnviz.engine.mask_rule).
        scale: True = 1/sqrt(d_head), False = 1 (no scaling), or a float factor.
        keep: also return every layer's intermediates (Q, K, V, scores, weights, head outputs, residuals).
        target: only for an encoder–decoder (see seq2seq.py); here it is an error.
        layers: run only the first `layers` layers (a page showing layer l needs none above it, since a layer
            depends only on those below): attentions is then (layers, H, n, n), and hidden the residual stream
            after them, with no final norm. None = every layer.
        weights_only: with layers, the last of them stops at its attention weights (no W_O output, residual or
            feed-forward): for a page that draws only that layer's pattern. hidden is then the residual stream
            entering it. Not with keep (its trace would be incomplete).
        """
        if target is not None:
            raise AttnvizError(f"{self.name} has no decoder and so no cross-attention: a target text needs an "
                               "encoder–decoder model such as BART.")
        if layers is not None and not (isinstance(layers, int) and 1 <= layers <= self.n_layers):
            raise AttnvizError(f"layers must be a whole number from 1 to {self.n_layers}, not {layers!r}.")
        if weights_only and (layers is None or keep):
            raise AttnvizError("weights_only needs layers= (the layer whose pattern is wanted) and no keep.")
        enc = self.encode(text, n_pad=padding_count(mask))
        n = len(enc.ids)
        extra = mask if mask is NOTHING_MASKED else parse_mask(mask, n)  # a spec as a matrix, a tensor checked
        full = applied_mask(self.builtin_mask(n), extra, n)  # what forward applies (res.mask)
        ids = torch.tensor([enc.ids], device=self.device)  # (1, T)
        with torch.inference_mode():  # forward takes the mask to the model's device; res.mask stays on the CPU
            hidden, weights, traces = self.forward(ids, extra, scale, keep, n_layers=layers, weights_only=weights_only)
        atts = torch.stack([w[0] for w in weights]).float().cpu()  # (L, nh, T, T)
        res = RunResult(
            tokens=enc.tokens, labels=enc.labels, token_ids=enc.ids, attentions=atts, mask=full,
            scale=resolve_scale(scale, self.d_head), truncated=enc.truncated,
            n_pad=enc.n_pad, traces=[_trace_to_cpu(t) for t in traces] if keep else None,
            hidden=hidden[0].float().cpu(), model_name=self.name,
        )
        if enc.truncated:
            res.notes.append(f"The text was longer than {self.name}'s limit of {self.max_tokens} tokens and was cut there.")
        return res

    def run_batch(self, texts: list[str], scale=True) -> tuple[list[Encoded], torch.Tensor]:
        """Several texts in one batch, padded to the longest, [PAD] keys masked as a real model does.

        Returns the encodings and attentions (B, n_layers, n_heads, T, T).
        """
        encs = [self.encode(t) for t in texts]
        T = max(len(e.ids) for e in encs)
        encs = [self.tokenizer.pad(e, T - len(e.ids)) for e in encs]
        ids = torch.tensor([e.ids for e in encs], device=self.device)  # (B, T)
        real = torch.tensor([[1] * (T - e.n_pad) + [0] * e.n_pad for e in encs])  # (B, T) 1 = real token
        key_mask = real.bool()[:, None, None, :]  # (B, 1, 1, T)
        with torch.inference_mode():  # the model's own mask is added to the padding's (mask_rule.py)
            _, weights, _ = self.forward(ids, key_mask, scale, keep=False)
        return encs, torch.stack(weights, dim=1).float().cpu()  # (B, L, nh, T, T)

    def builtin_mask(self, n: int, start: int = 0) -> torch.Tensor | None:
        """The mask the architecture itself applies to queries start .. start+n-1 over keys 0 .. start+n-1:
        causal for decoders (n, start + n), None for encoders; and Mistral's sliding window when every layer
        shares it (per-layer windows apply in forward)."""
        if not self.cfg.causal:
            return None
        causal = causal_mask(start + n)[start:]  # (n, start + n)
        window = self.cfg.shared_window
        return causal if window is None else causal & sliding_window_mask(n, start, window)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Next-token scores: final hidden (..., C) @ W_lmᵀ -> (..., V)."""
        if self.lm_head is None:
            raise AttnvizError(f"{self.name} has no language-model head: it cannot predict the next token.")
        # a run's hidden states come back on the CPU (RunResult), a forward's stay on the model's device
        return (hidden.to(self.lm_head.device) @ self.lm_head.t()).to(hidden.device)

    def new_caches(self, capacity: int, batch: int = 1) -> list[KVCache]:
        """An empty KV cache per layer with room for `capacity` tokens."""
        return [KVCache(batch, self.n_kv_heads, self.d_head, capacity, self.device) for _ in range(self.n_layers)]

    def generate(self, prompt: str, max_new_tokens: int = 20, cache: bool = True):
        """Greedy decoding: see `attnviz.engine.generation.generate`."""
        return generate(self, prompt, max_new_tokens=max_new_tokens, cache=cache)

    def forward(self, ids: torch.Tensor, mask, scale, keep: bool, caches: list[KVCache] | None = None,
                n_layers: int | None = None, weights_only: bool = False, head_ablation: dict | None = None,
                resume: tuple[int, torch.Tensor] | None = None):
        """ids (B, T) -> final hidden (B, T, C), per-layer weights [(B, nh, T, S)], traces.

        mask: on top of the model's own, as in run (attnviz.engine.mask_rule): None = the model's own alone (causal
            for a decoder, with its sliding windows); a bool tensor broadcastable to (B, 1, T, S), e.g. a batch's
            padding (B, 1, 1, S); NOTHING_MASKED = no mask at all, not even the model's own.
        caches: one KVCache per layer holding the earlier tokens (S = cached + T keys), or None (S = T).
        n_layers: stop after this many layers (hidden is then their output, without the final norm).
        weights_only: the last of them stops at its weights (see run); hidden is then the stream entering it.
        head_ablation: {layer: (heads, values (len(heads), d_head) or (B, len(heads), T, d_head))}: those heads'
            outputs are replaced by values before W_O (stack.attention_sublayer); a layer not named runs as usual.
            Built and checked by attnviz.analysis.ablation.
        resume: (layer, x): start at that layer from x (B, T, C), the residual stream entering it in an earlier run
            of the same ids (a kept trace's x_in); the layers below are skipped, not recomputed (an ablation sweep
            changes nothing below the ablated layer). Weights and traces then start at that layer.
        """
        T = ids.shape[1]
        start = 0 if caches is None else caches[0].length  # the position of ids[:, 0]
        if start + T > self.max_tokens:
            raise AttnvizError(f"{start + T} tokens is more than {self.name} can take ({self.max_tokens}).")
        own_windows = mask is not NOTHING_MASKED  # the architecture's windows are the model's own mask too
        mask = applied_mask(self.builtin_mask(T, start), mask, T)  # the model's own AND the caller's   (T, S) or more
        ids, mask = on_device(self.device, ids, mask)
        # 1) embed: token embeddings (+ a learned or sinusoidal position table) (+ token type, LayerNorm)
        first = 0 if resume is None else resume[0]
        x = self.embedder(ids, start) if resume is None else resume[1].to(self.device)  # (B, T, C)
        # 2) RoPE: the rotation of every new position, applied to q and k inside each layer
        rope = None
        if self.cfg.positions == "rope":
            rope = rope_angles(torch.arange(start, start + T, device=self.device), self.inv_freq)  # cos, sin (T, hs)
        # 3) the layers, each with the mask and scale of this run (and its own sliding window, if it has one)
        window_masks = {}  # window -> the run's mask with that window added, made once for the layers that share it
        weights, traces = [], []
        chosen = self.layers[:n_layers]
        for i, lw in enumerate(chosen):
            if i < first:
                continue
            window = self.cfg.windows[i]
            layer_mask = mask
            if window is not None and own_windows:  # the window is part of the architecture: it always applies
                if window not in window_masks:
                    window_masks[window] = combine_masks(sliding_window_mask(T, start, window).to(self.device), mask)
                layer_mask = window_masks[window]  # (T, start + T)
            if weights_only and i == len(chosen) - 1:
                weights.append(layer_weights(x, lw, self.cfg, layer_mask, scale, rope))
                break
            cache = None if caches is None else caches[i]
            ablate = None if head_ablation is None else head_ablation.get(i)
            x, w, trace = layer_forward(x, lw, self.cfg, layer_mask, scale, keep, cache, rope, ablate)  # (B, T, C)
            weights.append(w)  # (B, nh, T, S)
            if keep:
                traces.append(trace)
        # 4) the final norm (GPT-2's ln_f, Llama's norm); a run stopped early returns the residual stream as it is
        if self.cfg.final_norm and first + len(weights) == self.n_layers and not weights_only:
            x = norm(x, self.final_ln[0], self.final_ln[1], self.cfg)
        return x, weights, traces


def on_device(device: torch.device, *tensors):
    """The tensors on the model's device (None stays None): callers build masks with causal_mask() and
    builtin_mask(), on the CPU, and on a GPU the attention would refuse to add a CPU mask to CUDA scores."""
    return tuple(None if t is None else t.to(device) for t in tensors)


def _is_visible(c: str) -> bool:
    """Not whitespace, not a control or format character (zero-width space, joiners, BOM, bidi marks)."""
    return not c.isspace() and unicodedata.category(c) not in ("Cc", "Cf")


def _trace_to_cpu(t: LayerTrace) -> LayerTrace:
    """Every tensor on the CPU, floating ones as float32; the bool mask stays bool."""
    moved = {k: (_to_cpu(v) if isinstance(v, torch.Tensor) else v) for k, v in t.__dict__.items()}
    return type(t)(**moved)


def _to_cpu(t: torch.Tensor) -> torch.Tensor:
    return t.float().cpu() if t.is_floating_point() else t.cpu()
