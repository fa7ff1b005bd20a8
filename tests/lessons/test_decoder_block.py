"""The decoder block, stage by stage (attnviz/lessons/encoder_layer/decoder_block.py), for attnviz-tiny-bart: the
stream entering and leaving each decoder layer equals transformers' decoder hidden states, the encoder output its
encoder's last hidden state, and the two attentions transformers' eager ones (tolerances: tests/tolerances.py)."""

import pytest
import torch
from tolerances import HIDDEN_VS_TRANSFORMERS_RELATIVE, WEIGHTS_VS_TRANSFORMERS, relative_gap
from transformers import BartModel

import attnviz
from attnviz.engine.models import loading
from attnviz.engine.truth import check_decoder_block_against_transformers
from attnviz.errors import AttnvizError
from attnviz.lessons.encoder_layer.decoder_block import decoder_block_steps, decoder_stages

SOURCE = "seven hundred eighty five million four hundred twelve thousand three hundred sixty"
TARGET = "785412360"


@pytest.fixture(scope="module")
def bart():
    return attnviz.load_model("attnviz-tiny-bart")


@pytest.fixture(scope="module")
def theirs(bart):
    ref = BartModel.from_pretrained(str(loading.shipped_model_folder("attnviz-tiny-bart")),
                                    attn_implementation="eager", dtype=torch.float32).eval()
    res = bart.run(SOURCE, target=TARGET)
    with torch.no_grad():
        return ref(input_ids=torch.tensor([res.source_token_ids]), decoder_input_ids=torch.tensor([res.token_ids]),
                   output_attentions=True, output_hidden_states=True)


@pytest.mark.parametrize("layer", [0, 1])
def test_every_stage_equals_transformers_where_it_keeps_one(bart, theirs, layer):
    steps = decoder_block_steps(bart, SOURCE, TARGET, layer)
    T, S, C = len(steps.decoder_labels), len(steps.source_labels), bart.dec_cfg.d_model
    assert steps.y_in.shape == steps.y1.shape == steps.y2.shape == steps.y_out.shape == (T, C)
    assert steps.h_enc.shape == (S, C) and steps.ffn_hidden.shape == (T, 256)
    gap = lambda ours, ref: (ours - ref[0]).abs().max().item()
    assert relative_gap(steps.h_enc, theirs.encoder_last_hidden_state[0]) <= HIDDEN_VS_TRANSFORMERS_RELATIVE
    assert relative_gap(steps.y_in, theirs.decoder_hidden_states[layer][0]) <= HIDDEN_VS_TRANSFORMERS_RELATIVE
    assert relative_gap(steps.y_out, theirs.decoder_hidden_states[layer + 1][0]) <= HIDDEN_VS_TRANSFORMERS_RELATIVE
    assert gap(steps.self_weights, theirs.decoder_attentions[layer]) <= WEIGHTS_VS_TRANSFORMERS
    assert gap(steps.cross_weights, theirs.cross_attentions[layer]) <= WEIGHTS_VS_TRANSFORMERS
    assert (torch.triu(steps.self_weights, 1) == 0).all()
    assert steps.decoder_labels[:2] == ["</s>", "<s>"]


def test_a_layer_it_lacks_and_a_model_without_decoder_are_refused(bart, minilm):
    with pytest.raises(AttnvizError, match="decoder layers 0..1, not 2"):
        decoder_block_steps(bart, SOURCE, TARGET, 2)
    with pytest.raises(AttnvizError, match="has no decoder"):
        decoder_block_steps(minilm, SOURCE, TARGET, 0)


def test_the_pages_live_check_compares_the_stages_transformers_keeps(bart):
    steps = decoder_block_steps(bart, SOURCE, TARGET, 1)
    truth = check_decoder_block_against_transformers(bart, SOURCE, TARGET, steps)
    assert truth.matches and set(truth.parts) == {"encoder output", "entering", "leaving", "self-attention",
                                                  "cross-attention"}
    steps.y_out = steps.y_out.clone()
    steps.y_out[0, 0] += 1e-3  # a stage that differs is caught
    assert not check_decoder_block_against_transformers(bart, SOURCE, TARGET, steps).matches
    stages = decoder_stages(decoder_block_steps(bart, SOURCE, TARGET, 0))
    assert [s.key for s in stages] == ["y", "self", "y1", "cross", "y2", "ffn_hidden", "ffn", "y_out"]
    assert "layernorm_embedding" in stages[0].note
