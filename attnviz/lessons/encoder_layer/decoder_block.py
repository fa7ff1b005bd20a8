"""One decoder layer of an encoder–decoder (BART), recomputed stage by stage with every intermediate kept.

    y₁ = LN₁(y + CausalSelfMHA(y))            the decoder reads the target written so far (causal mask)
    y₂ = LN₂(y₁ + CrossMHA(y₁, h_enc))        queries from y₁, keys and values from the encoder output h_enc
    y_out = LN₃(y₂ + FFN(y₂))                 FFN(u) = act(u W₁ + b₁) W₂ + b₂

The same functions as seq2seq.decoder_layer_forward (which runs the model), called one at a time so each stage can
be shown; y and y_out equal transformers' decoder hidden states (tests/lessons/test_decoder_block.py).
Shapes: T decoder positions, S source tokens, C = d_model, F = FFN width, nh heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.engine.masks import causal_mask
from attnviz.engine.models.seq2seq import cross_attention_sublayer, decoder_layer_forward
from attnviz.engine.models.stack import ACTIVATIONS, attention_sublayer, linear, mlp, norm
from attnviz.errors import AttnvizError


@dataclass
class DecoderBlockSteps:
    layer: int
    source_labels: list[str]  # S
    decoder_labels: list[str]  # T: the decoder's input tokens (the target shifted right)
    h_enc: torch.Tensor  # the encoder's output (S, C): the keys' and values' input in every decoder layer
    y_in: torch.Tensor  # the decoder stream entering this layer (T, C)
    self_out: torch.Tensor  # CausalSelfMHA(y_in) (T, C)
    self_weights: torch.Tensor  # (nh, T, T), zero above the diagonal
    y1: torch.Tensor  # LN₁(y_in + self_out) (T, C)
    cross_out: torch.Tensor  # CrossMHA(y1, h_enc) (T, C)
    cross_weights: torch.Tensor  # (nh, T, S)
    y2: torch.Tensor  # LN₂(y1 + cross_out) (T, C)
    ffn_hidden: torch.Tensor  # act(y2 W₁ + b₁) (T, F)
    ffn_out: torch.Tensor  # FFN(y2) (T, C)
    y_out: torch.Tensor  # LN₃(y2 + ffn_out) (T, C)
    activation: str  # "gelu", ...
    scale: float


@torch.inference_mode()
def decoder_block_steps(model, source: str, target: str, layer: int) -> DecoderBlockSteps:
    """Decoder layer `layer` of an encoder–decoder for (source, target), at the trained settings (causal mask only,
    1/√d_k): every stage's tensor for one sentence."""
    if not model.is_encoder_decoder:
        raise AttnvizError(f"{model.name} has no decoder.")
    if not 0 <= layer < model.n_decoder_layers:
        raise AttnvizError(f"{model.name} has decoder layers 0..{model.n_decoder_layers - 1}, not {layer}.")
    cfg = model.dec_cfg
    src = model.encode(source)
    _, ids, _, labels = model.decoder_input(target)
    h_enc, _, _ = model.forward(torch.tensor([src.ids], device=model.device), None, True, keep=False)  # (1, S, C)
    y = model.dec_embedder(torch.tensor([ids], device=model.device))  # (1, T, C)
    mask = causal_mask(len(ids)).to(model.device)  # (T, T): position t sees 0 .. t
    for lw, cw in zip(model.dec_layers[:layer], model.cross_layers[:layer], strict=True):
        y, _, _ = decoder_layer_forward(y, h_enc, lw, cw, cfg, mask, True)
    lw, cw = model.dec_layers[layer], model.cross_layers[layer]
    self_out, self_att, _ = attention_sublayer(y, lw, cfg, mask, True)  # CausalSelfMHA(y)       (1, T, C)
    y1 = norm(y + self_out, lw.ln1_w, lw.ln1_b, cfg)  # y₁ = LN₁(y + CausalSelfMHA(y))        (1, T, C)
    cross_out, cross_w = cross_attention_sublayer(y1, h_enc, cw, cfg.n_heads, True)  # CrossMHA (1, T, C)
    y2 = norm(y1 + cross_out, cw.ln_w, cw.ln_b, cfg)  # y₂ = LN₂(y₁ + CrossMHA(y₁, h_enc))     (1, T, C)
    if cfg.mlp == "swiglu":
        raise AttnvizError(f"{model.name}'s decoder FFN is not the plain act(u W₁ + b₁) W₂ + b₂ this page shows.")
    hidden = ACTIVATIONS[cfg.activation](linear(y2, lw.w_ff1, lw.b_ff1))  # act(y₂ W₁ + b₁)     (1, T, F)
    ffn_out = mlp(y2, lw, cfg)  # FFN(y₂) = hidden W₂ + b₂                                      (1, T, C)
    y_out = norm(y2 + ffn_out, lw.ln2_w, lw.ln2_b, cfg)  # y_out = LN₃(y₂ + FFN(y₂))          (1, T, C)
    first = lambda t: t[0].float().cpu()
    return DecoderBlockSteps(layer, src.labels, labels, first(h_enc), first(y), first(self_out),
                             first(self_att.weights), first(y1), first(cross_out), first(cross_w), first(y2),
                             first(hidden), first(ffn_out), first(y_out), cfg.activation, float(self_att.scale))


# each stage's row in the page's stage-by-stage chart: a leading "+" marks what a sub-layer adds to the stream
STAGE_ROWS = {"y": "y (entering)", "self": "+ self-attention", "y1": "y⁽¹⁾ (LN 1)", "cross": "+ cross-attention",
              "y2": "y⁽²⁾ (LN 2)", "ffn_hidden": "a (FFN hidden)", "ffn": "+ FFN", "y_out": "y_out (LN 3)"}


@dataclass(frozen=True)
class DecoderStage:
    key: str
    title: str
    equation: str  # LaTeX with "@" where the position t goes
    value: torch.Tensor  # (T, C) or (T, F)
    note: str


def decoder_stages(steps: DecoderBlockSteps) -> list[DecoderStage]:
    """The layer's stages in the order they run, each with its equation and its (T, ·) tensor."""
    L, act = steps.layer, steps.activation
    entering = ("the decoder's token embeddings plus its learned position embeddings, then a LayerNorm (BART's "
                "layernorm_embedding)" if L == 0 else f"decoder layer {L - 1}'s output")
    return [
        DecoderStage("y", f"The decoder stream entering layer {L}", r"y_{@}", steps.y_in,
                     f"Position t's vector: {entering}."),
        DecoderStage("self", "Masked self-attention: what it adds", r"\mathrm{SelfMHA}(y)_{@} = \Big(\big\Vert_j "
                     r"\textstyle\sum_{u \le @} \alpha^{j}_{@,u}\,(y_u W_V^{j} + b_V^{j})\big) W_O + b_O",
                     steps.self_out, "Each head mixes the value vectors of positions 0 … t only (u ≤ t: the causal "
                     "mask); the heads' results side by side, times W_O."),
        DecoderStage("y1", "Residual + LayerNorm 1",
                     r"y^{(1)}_{@} = \mathrm{LN}_1\big(y_{@} + \mathrm{SelfMHA}(y)_{@}\big)", steps.y1,
                     "Self-attention's result is added to the stream, then normalised (post-LN, as in BART)."),
        DecoderStage("cross", "Cross-attention: what it adds", r"\mathrm{CrossMHA}(y^{(1)}, h)_{@} = \Big(\big\Vert_j "
                     r"\textstyle\sum_{s} \beta^{j}_{@,s}\,(h_s W_V^{j} + b_V^{j})\big) W_O + b_O",
                     steps.cross_out, "The queries come from y⁽¹⁾ (this position), the keys and values from the "
                     "encoder's output h, every source token s: no mask."),
        DecoderStage("y2", "Residual + LayerNorm 2", r"y^{(2)}_{@} = \mathrm{LN}_2\big(y^{(1)}_{@} + "
                     r"\mathrm{CrossMHA}(y^{(1)}, h)_{@}\big)", steps.y2,
                     "What was read from the source is added to the stream, then normalised."),
        DecoderStage("ffn_hidden", "Feed-forward: the wide hidden layer", rf"a_{{@}} = \mathrm{{{act}}}"
                     r"\big(y^{(2)}_{@} W_1 + b_1\big)", steps.ffn_hidden,
                     f"Position by position, no mixing between positions: {steps.ffn_hidden.shape[1]} features, "
                     f"{act} applied to each."),
        DecoderStage("ffn", "Feed-forward: what it adds", r"\mathrm{FFN}(y^{(2)})_{@} = a_{@} W_2 + b_2",
                     steps.ffn_out, "Back to d_model features."),
        DecoderStage("y_out", f"Residual + LayerNorm 3: layer {L}'s output",
                     r"y^{\text{out}}_{@} = \mathrm{LN}_3\big(y^{(2)}_{@} + \mathrm{FFN}(y^{(2)})_{@}\big)",
                     steps.y_out, "The stream the next decoder layer reads (after the last one: the output layer, tied to the "
                     "token embeddings, turns it into the next token's scores)."),
    ]
