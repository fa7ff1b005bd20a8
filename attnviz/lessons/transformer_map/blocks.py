"""The Transformer map: every block of the encoder–decoder architecture, where it sits in the one figure, and the
page of the app that teaches it, in the state that shows it best.

A block's link is relative ("./encoder_layer?…", as a lecture step's), so it opens on any server address and base
path, and the page makes no request to another host. `fig` names the figure a projector brings to the first screen
(ui/focus.py); elsewhere it is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

SENTENCE = "The animal didn't cross the street because it was too tired."
SHORT = "The cat sat on the mat."


@dataclass(frozen=True)
class Block:
    """One box of the figure: its words, its place (in the drawing's units) and the page that teaches it."""

    key: str
    label: str
    kind: str  # "attention" | "norm" | "ffn" | "embed" | "output": its colour
    x: float
    y: float
    w: float
    h: float
    page: str  # the page's URL path ("" = the explorer)
    state: tuple[tuple[str, str], ...]  # its URL parameters
    teaches: str  # what that page shows of this block, for the list under the figure (after the page's title: not
    # starting with it again)

    def link(self, extra: tuple[tuple[str, str], ...] = ()) -> str:
        """The relative link that opens the block's page in its state (extra: more parameters, such as a lecture's
        keys, so that a block opened from a lecture's step stays in the lecture)."""
        query = urlencode(self.state + tuple(extra))
        return f"./{self.page}" + (f"?{query}" if query else "")


# the encoder (left) and the decoder (right) stacks, bottom to top as data flows; widths and heights in the SVG's units
ENC_X, DEC_X, COL_W = 60, 480, 320
BLOCKS = (
    Block("enc_embed", "Input embedding", "embed", ENC_X, 556, COL_W, 40, "step_by_step",
          (("model", "toy"), ("text", SHORT)),
          "From X, one embedding row per token, one head followed to its output."),
    Block("enc_pos", "+ positions", "embed", ENC_X + 75, 508, COL_W - 150, 34, "positions", (("fig", "shuffle"),),
          "Without them attention sees a set (the shuffle test); sinusoidal, learned and rotary positions."),
    # no head, row or cell of its own: layer 3, head 1 with the row of "it" and the key "animal" picked was the
    # default lecture's step 5 answered, on every phone from step 1 on (its links are the map's, whatever the lecture)
    Block("enc_attn", "Multi-head self-attention", "attention", ENC_X + 15, 446, COL_W - 30, 44, "",
          (("text", SENTENCE), ("fig", "head")),
          "Every head of a layer, one heatmap each; pick a head to enlarge it and a cell to see its arithmetic."),
    Block("enc_norm1", "Add & Norm", "norm", ENC_X + 15, 398, COL_W - 30, 34, "encoder_layer",
          (("text", SHORT), ("enc_token", "2")),
          "The residual sum and the LayerNorm after attention, for one token, number by number."),
    Block("enc_ffn", "Feed-forward", "ffn", ENC_X + 15, 340, COL_W - 30, 44, "encoder_layer",
          (("text", SHORT), ("enc_token", "2")),
          "The two-layer feed-forward network that works on each token alone."),
    Block("enc_norm2", "Add & Norm", "norm", ENC_X + 15, 292, COL_W - 30, 34, "encoder_layer",
          (("text", SHORT), ("enc_token", "2")),
          "The second residual sum and LayerNorm."),
    Block("dec_embed", "Output embedding", "embed", DEC_X, 556, COL_W, 40, "kv_cache", (("model", "tiny-llama"),),
          "A decoder takes the tokens it wrote so far as its input, one new token per step."),
    Block("dec_pos", "+ positions", "embed", DEC_X + 75, 508, COL_W - 150, 34, "positions", (("fig", "shuffle"),),
          "The same position signal on the decoder's side."),
    Block("dec_self", "Masked self-attention", "attention", DEC_X + 15, 446, COL_W - 30, 44, "masks_lab",
          (("fig", "causal_card"),),
          "The causal mask: each token sees itself and the tokens before it."),
    Block("dec_norm1", "Add & Norm", "norm", DEC_X + 15, 398, COL_W - 30, 34, "decoder_block",
          (("fig", "decoder_stages"),),
          "Masked self-attention, cross-attention, FFN, stage by stage, each with its residual and LayerNorm."),
    Block("dec_cross", "Cross-attention", "attention", DEC_X + 15, 340, COL_W - 30, 44, "cross_attention", (),
          "The decoder's queries read the encoder's keys and values (a target × source grid)."),
    Block("dec_norm2", "Add & Norm", "norm", DEC_X + 15, 292, COL_W - 30, 34, "decoder_block",
          (("fig", "decoder_stages"),),
          "The residual and LayerNorm after cross-attention."),
    Block("dec_ffn", "Feed-forward", "ffn", DEC_X + 15, 234, COL_W - 30, 44, "decoder_block",
          (("fig", "decoder_stages"),),
          "Its feed-forward network, token by token."),
    Block("dec_norm3", "Add & Norm", "norm", DEC_X + 15, 186, COL_W - 30, 34, "decoder_block",
          (("fig", "decoder_stages"),),
          "The last residual and LayerNorm."),
    Block("out_linear", "Linear", "output", DEC_X + 55, 118, COL_W - 110, 34, "kv_cache", (("model", "tiny-llama"),),
          "The decoder's last vector becomes a score per vocabulary token and the next token is picked."),
    Block("out_softmax", "Softmax", "output", DEC_X + 55, 70, COL_W - 110, 34, "kv_cache", (("model", "tiny-llama"),),
          "The scores become the next token's probabilities; the chosen token is fed back in."),
)
ENCODER_BOX = (ENC_X, 282, COL_W, 216)  # x, y, w, h around the repeated encoder layer
DECODER_BOX = (DEC_X, 176, COL_W, 322)  # around the repeated decoder layer
BLOCKS_BY_KEY = {b.key: b for b in BLOCKS}
