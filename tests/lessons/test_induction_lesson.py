"""The induction lesson's probe: sequences, scores and loss, on a tiny random Llama and on the trained model."""

import pytest
import torch

import attnviz
from attnviz.analysis.head_scores import induction_scores, previous_token_scores
from attnviz.errors import AttnvizError
from attnviz.lessons.induction.figures import loss_figure
from attnviz.lessons.induction.probe import probe, random_repeated_ids, require_language_model, seen_token_mass, text_twice_ids


@pytest.fixture(scope="module")
def random_llama(tiny_decoder_folder):
    return attnviz.load_model(str(tiny_decoder_folder("llama")))


def test_random_sequence_is_a_seeded_block_repeated_twice(tiny_llama):
    ids, first = random_repeated_ids(tiny_llama, 12, seed=4)
    assert first == 1 and ids[0] == tiny_llama.encode("the").ids[0]  # [BOS]
    block = ids[1:13]
    assert ids[13:] == block and len(set(block)) == 12
    assert random_repeated_ids(tiny_llama, 12, seed=4) == (ids, first)
    assert random_repeated_ids(tiny_llama, 12, seed=5)[0] != ids


def test_probe_scores_equal_the_head_score_functions_on_the_models_attentions(random_llama):
    ids, period, first = text_twice_ids(random_llama, "The cat sat on the mat")
    p = probe(random_llama, ids, period, first)
    x = torch.tensor([ids])
    with torch.inference_mode():
        hidden, weights, _ = random_llama.forward(x, random_llama.builtin_mask(len(ids)), True, False)
    attn = torch.stack([w[0] for w in weights]).cpu()  # (the probe's are on the CPU, a forward's on the model's device)
    torch.testing.assert_close(p.attentions, attn)
    torch.testing.assert_close(p.previous, previous_token_scores(attn))
    torch.testing.assert_close(p.induction, induction_scores(attn, period, first))
    expected = torch.nn.functional.cross_entropy(random_llama.logits(hidden[0].cpu())[:-1], x[0, 1:], reduction="none")
    torch.testing.assert_close(p.loss, expected)
    fig = loss_figure(p)
    assert list(fig.data[0].y) == pytest.approx(p.loss.tolist())


def test_trained_model_predicts_the_repeated_copy_better_than_the_first(tiny_llama):
    for seed in (0, 1, 2):
        ids, first = random_repeated_ids(tiny_llama, 12, seed=seed)
        first_loss, second_loss = probe(tiny_llama, ids, 12, first).copy_losses()
        assert second_loss < first_loss - 5.0  # nats: the repeat is far less surprising


def test_trained_model_has_induction_heads_in_its_second_layer_only(tiny_llama):
    """What the page teaches is there: every head of layer 1 puts a good share of its weight on the token after
    the current word's earlier occurrence; no head of layer 0 can (it has no previous-token information yet)."""
    for seed in (0, 1, 2):
        ids, first = random_repeated_ids(tiny_llama, 20, seed=seed)
        p = probe(tiny_llama, ids, 20, first)
        assert float(p.induction[1].min()) > 0.2 and float(p.induction[1].max()) > 0.3
        assert float(p.induction[0].max()) < 0.1  # uniform over ~30 keys would give about 0.03
        assert float(p.previous[0].max()) > float(p.previous[1].max())  # the previous-token signal is in layer 0


def test_bad_input_is_a_clear_message(tiny_llama, bundled_model):
    with pytest.raises(AttnvizError, match="not a causal language model"):
        require_language_model(bundled_model)
    with pytest.raises(AttnvizError, match="4 to 60"):
        random_repeated_ids(tiny_llama, 2, seed=0)
    with pytest.raises(AttnvizError, match="more than"):
        text_twice_ids(tiny_llama, " ".join(["word"] * 200))
    with pytest.raises(AttnvizError, match="at least two"):
        text_twice_ids(tiny_llama, "cat")


def test_seen_token_mass_is_the_probability_on_tokens_already_in_the_sequence():
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]]))
    mass = seen_token_mass(logits, [0, 2, 1])  # position 0 has seen {0}; position 1 has seen {0, 2}
    torch.testing.assert_close(mass, torch.tensor([0.5, 0.8]))
