"""An encoder–decoder (BART-shaped): the encoder reads the source, the decoder writes the target.

    encoder layer (post-LN):  x = LN(x + SelfMHA(x));                   x = LN(x + FFN(x))
    decoder layer (post-LN):  y = LN(y + CausalSelfMHA(y));
                              y = LN(y + CrossMHA(Q from y, K and V from the encoder output))
                              y = LN(y + FFN(y))
The encoder is exactly the post-LN stack of stack.py and model.py, so the encoder-decoder model *is* a Model
whose layers are the encoder's: `model.run(text)` runs that encoder (and says so in res.notes);
`model.run(source, target=...)` runs both halves and returns the cross-attention.

Decoder input: as transformers builds it from labels (`shift_tokens_right`): the tokenized target
with decoder_start_token_id put in front and the last token dropped, so position t is where the
decoder predicts target token t. res.token_ids are those decoder input ids.
Shapes: B batch, S source tokens, T target tokens, C = d_model, nh heads, hs = d_head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attnviz.engine.attention import merge_heads, resolve_scale, scaled_dot_product_attention_trace, split_heads
from attnviz.engine.mask_kinds import padding_count, parse_mask
from attnviz.engine.mask_rule import NOTHING_MASKED, applied_mask
from attnviz.engine.masks import causal_mask
from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.model import Embedder, Model, RunResult
from attnviz.engine.models.stack import LayerWeights, attention_sublayer, mlp, norm
from attnviz.errors import AttnvizError


@dataclass
class CrossWeights:
    """The decoder's attention over the encoder output (transformers' `encoder_attn`), weights (in, out)."""

    w_q: torch.Tensor  # (C, C) applied to the decoder stream
    b_q: torch.Tensor  # (C,)
    w_kv: torch.Tensor  # (C, 2C) W_K | W_V, applied to the encoder output
    b_kv: torch.Tensor  # (2C,)
    w_o: torch.Tensor  # (C, C)
    b_o: torch.Tensor  # (C,)
    ln_w: torch.Tensor  # encoder_attn_layer_norm, after the residual (post-LN)
    ln_b: torch.Tensor

    def to(self, device) -> CrossWeights:
        return CrossWeights(**{k: v.to(device) for k, v in self.__dict__.items()})


@dataclass
class Seq2SeqResult(RunResult):
    """RunResult for a source and a target. The inherited fields (tokens, token_ids, attentions, mask)
    describe the decoder; the encoder's side is in the source_* fields."""

    cross_attentions: torch.Tensor | None = None  # (n_decoder_layers, nh, n_target, n_source), rows sum to 1
    encoder_attentions: torch.Tensor | None = None  # (n_encoder_layers, nh, n_source, n_source)
    source_tokens: list[str] = field(default_factory=list)
    source_labels: list[str] = field(default_factory=list)
    source_token_ids: list[int] = field(default_factory=list)
    target_token_ids: list[int] = field(default_factory=list)  # the tokenized target, before the shift right


def cross_attention_sublayer(y, enc, cw: CrossWeights, n_heads: int, scale):
    """Queries from the decoder stream y (B, T, C); keys and values from the encoder output enc (B, S, C)."""
    C = y.shape[-1]
    q = split_heads(y @ cw.w_q + cw.b_q, n_heads)  # 1) Q = y W_Q                 (B, nh, T, hs)
    k, v = (enc @ cw.w_kv + cw.b_kv).split(C, dim=2)  # K = enc W_K, V = enc W_V     each (B, S, C)
    k, v = split_heads(k, n_heads), split_heads(v, n_heads)  # (B, nh, S, hs)
    # 2) no mask: every target position may read every source token (nothing of the source is "future")
    att = scaled_dot_product_attention_trace(q, k, v, mask=None, scale=scale)  # weights (B, nh, T, S)
    return merge_heads(att.output) @ cw.w_o + cw.b_o, att.weights  # 3) concat, 4) W_O   (B, T, C)


def decoder_layer_forward(y, enc, lw: LayerWeights, cw: CrossWeights, cfg: ModelConfig, mask, scale):
    """One post-LN decoder layer -> (new y, self-attention weights (B, nh, T, T), cross weights (B, nh, T, S))."""
    self_out, self_att, _ = attention_sublayer(y, lw, cfg, mask, scale)  # 1) causal self-attention
    y = norm(y + self_out, lw.ln1_w, lw.ln1_b, cfg)  # LN(y + CausalSelfMHA(y))               (B, T, C)
    cross_out, cross_weights = cross_attention_sublayer(y, enc, cw, cfg.n_heads, scale)  # 2) cross-attention
    y = norm(y + cross_out, cw.ln_w, cw.ln_b, cfg)  # LN(y + CrossMHA(y, enc))                 (B, T, C)
    y = norm(y + mlp(y, lw, cfg), lw.ln2_w, lw.ln2_b, cfg)  # 3) LN(y + FFN(y))                (B, T, C)
    return y, self_att.weights, cross_weights


class EncoderDecoderModel(Model):
    """A Model (its encoder) plus a decoder with cross-attention. See the module docstring."""

    is_encoder_decoder = True

    def __init__(self, name, family, enc_cfg: ModelConfig, enc_embedder: Embedder, enc_layers: list[LayerWeights],
                 dec_cfg: ModelConfig, dec_embedder: Embedder, dec_layers: list[LayerWeights],
                 cross_layers: list[CrossWeights], tokenizer, decoder_start_id: int, source: str | None = None,
                 device: str = "cpu"):
        super().__init__(name, family, enc_cfg, enc_embedder, enc_layers, tokenizer, source=source, device=device)
        self.dec_cfg = dec_cfg
        self.dec_embedder = dec_embedder.to(self.device)
        self.dec_layers = [lw.to(self.device) for lw in dec_layers]
        self.cross_layers = [cw.to(self.device) for cw in cross_layers]
        self.decoder_start_id = decoder_start_id

    @property
    def n_decoder_layers(self) -> int:
        return self.dec_cfg.n_layers

    @property
    def n_decoder_heads(self) -> int:
        return self.dec_cfg.n_heads

    def to(self, device) -> EncoderDecoderModel:
        return EncoderDecoderModel(self.name, self.family, self.cfg, self.embedder, self.layers, self.dec_cfg,
                                   self.dec_embedder, self.dec_layers, self.cross_layers, self.tokenizer,
                                   self.decoder_start_id, self.source, device)

    def run(self, text: str, mask=None, scale=True, keep: bool = False, target: str | None = None,
            layers: int | None = None, weights_only: bool = False) -> RunResult:
        """run(text): the encoder alone (res.notes says so). run(source, target=...): both halves.

        With a target, mask applies to the decoder's self-attention (on top of its causal mask) and
        never to the cross-attention; scale applies to every attention: encoder, decoder and cross.
        keep (per-layer traces) applies to the encoder-only run; a run with a target keeps none.
        """
        if target is not None and layers is not None:
            raise AttnvizError("layers= stops the encoder early; a run with a target needs the whole encoder.")
        if target is None:
            res = super().run(text, mask=mask, scale=scale, keep=keep, layers=layers, weights_only=weights_only)
            res.notes.append(f"{self.name} is an encoder–decoder: this is its encoder's self-attention. Give a target "
                             "text (the Cross-attention page) to see the decoder and its cross-attention.")
            return res
        return self.run_pair(text, target, mask=mask, scale=scale)

    def decoder_input(self, target: str):
        """The tokenized target shifted right (decoder start token first, last token dropped), as transformers does."""
        enc = self.encode(target)
        if enc.truncated:
            raise AttnvizError(f"The target is longer than {self.name}'s decoder can take ({self.max_tokens} tokens): "
                               "shorten it.")
        start_label = self.tokenizer.backend.id_to_token(self.decoder_start_id) or str(self.decoder_start_id)
        ids = [self.decoder_start_id] + enc.ids[:-1]  # shift_tokens_right
        tokens = [start_label] + enc.tokens[:-1]
        labels = [start_label] + enc.labels[:-1]
        return enc, ids, tokens, labels

    def run_pair(self, source: str, target: str, mask=None, scale=True) -> Seq2SeqResult:
        if padding_count(mask):
            raise AttnvizError("Padding masks are not offered on an encoder–decoder: pick another mask.")
        src = _labelled("source", self.encode, source)
        tgt, ids, tokens, labels = _labelled("target", self.decoder_input, target)
        T = len(ids)
        extra = mask if mask is NOTHING_MASKED else parse_mask(mask, T)
        full = applied_mask(causal_mask(T), extra, T)  # the decoder's own mask is causal (attnviz.engine.mask_rule)
        with torch.inference_mode():
            src_ids = torch.tensor([src.ids], device=self.device)  # (1, S)
            enc_out, enc_weights, _ = self.forward(src_ids, None, scale, keep=False)  # (1, S, C)
            y = self.dec_embedder(torch.tensor([ids], device=self.device))  # (1, T, C)
            dec_mask = None if full is None else full.to(self.device)
            self_w, cross_w = [], []
            for lw, cw in zip(self.dec_layers, self.cross_layers, strict=True):
                y, sw, xw = decoder_layer_forward(y, enc_out, lw, cw, self.dec_cfg, dec_mask, scale)
                self_w.append(sw[0])
                cross_w.append(xw[0])
        res = Seq2SeqResult(
            tokens=tokens, labels=labels, token_ids=ids, attentions=torch.stack(self_w).float().cpu(), mask=full,
            scale=resolve_scale(scale, self.dec_cfg.d_head), truncated=src.truncated, hidden=y[0].float().cpu(),
            model_name=self.name, cross_attentions=torch.stack(cross_w).float().cpu(),
            encoder_attentions=torch.stack([w[0] for w in enc_weights]).float().cpu(),
            source_tokens=src.tokens, source_labels=src.labels, source_token_ids=src.ids, target_token_ids=tgt.ids,
        )
        if src.truncated:
            res.notes.append(f"The source was longer than {self.name}'s limit of {self.max_tokens} tokens and was cut there.")
        return res


def _labelled(which: str, fn, text: str):
    """fn(text), with an input error's message saying whether the source or the target is at fault."""
    try:
        return fn(text)
    except AttnvizError as err:
        raise AttnvizError(f"{which.capitalize()}: {err}") from None
