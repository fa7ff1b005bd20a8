"""The KV-cache lesson: both decodings agree, the step view reads the real cache, memory figures follow the formula."""

import math

import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError
from attnviz.lessons.kv_cache.decoding import MAX_NEW, agreement, decode_both, require_causal, step_times, step_view
from attnviz.lessons.kv_cache.figures import memory_figure, timing_figure, timing_sentence
from attnviz.lessons.kv_cache.memory import KNOWN_CONFIGS, attention_kind, known_models_table, variants_of

PROMPT = "The cat sat on the mat. A dog"


@pytest.fixture(scope="module")
def llama(tiny_decoder_folder):
    return attnviz.load_model(str(tiny_decoder_folder("llama")))


@pytest.fixture(scope="module")
def decoded(llama):
    return decode_both(llama, PROMPT, 8)


def test_cached_and_full_decoding_agree(decoded):
    a = agreement(*decoded)
    assert a.same_tokens and a.n_steps == 8
    assert 0.0 <= a.max_abs_difference <= 1e-5


def test_step_view_reads_the_cache_and_reproduces_the_row(llama, decoded):
    cached, _ = decoded
    for step, layer, head in [(0, 0, 0), (5, 1, 3)]:
        v = step_view(llama, cached, step, layer, head)
        n = cached.n_prompt + step
        assert v.keys.shape == v.values.shape == (n, llama.d_head) and v.query.shape == (1, llama.d_head)
        assert v.kv_head == head // (llama.n_heads // llama.n_kv_heads)
        torch.testing.assert_close(v.keys, cached.kv[layer].k[0, v.kv_head, :n])
        torch.testing.assert_close(v.weights[0], cached.steps[step].attention[layer, head])
        torch.testing.assert_close(v.scaled_scores, v.query @ v.keys.T / math.sqrt(llama.d_head))
        assert v.recomputed_difference < 1e-5  # softmax(q·Kᵀ/√d) is the row the generation kept
        assert v.labels == cached.labels[:n]


def test_timing_leaves_out_the_prefill_step(decoded):
    cached, full = decoded
    x, y = step_times(cached)
    assert x == [cached.n_prompt + i for i in range(1, 8)] and all(t > 0 for t in y)
    fig = timing_figure(step_times(cached), step_times(full))
    assert len(fig.data) == 2 and list(fig.data[1].x) == x and list(fig.data[1].y) == y


def test_memory_per_token_mha_gqa_mqa():
    rows = variants_of(n_layers=2, n_heads=4, n_kv_heads=2, d_head=16)
    assert [r["K/V heads"] for r in rows] == [4, 2, 1]
    assert [r["bytes per token"] for r in rows] == [2 * 2 * k * 16 * 2 for k in (4, 2, 1)]
    assert len(variants_of(2, 4, 4, 16)) == 2  # an MHA model: MHA and MQA rows only
    assert memory_figure(rows, "t").data[0].y == tuple(r["bytes per token"] for r in rows)


def test_known_models_table_states_published_configs():
    table = {r["model"]: r for r in known_models_table()}
    assert table["Llama-2-7B"]["KiB per token"] == 512 and table["Llama-2-7B"]["attention"] == "MHA"
    assert table["Llama-3-8B"]["KiB per token"] == 128 and table["Llama-3-8B"]["attention"] == "GQA"
    assert table["Mistral-7B-v0.1"]["KiB per token"] == 128
    assert attention_kind(71, 1) == "MQA"
    assert all(c.source.startswith("https://huggingface.co/") and c.source.endswith("config.json") for c in KNOWN_CONFIGS)


def test_bad_input_is_a_clear_message(llama, bundled_model):
    with pytest.raises(AttnvizError, match="encoder.*tiny-llama"):
        require_causal(bundled_model)
    for n in (0, MAX_NEW + 1, 2.5):
        with pytest.raises(AttnvizError, match=f"1 to {MAX_NEW}"):
            decode_both(llama, PROMPT, n)
    with pytest.raises(AttnvizError, match="Step 99 does not exist"):
        step_view(llama, decode_both(llama, PROMPT, 2)[0], 99, 0, 0)


def test_the_timing_sentence_names_where_the_cache_was_not_faster_and_why():
    cached, full = ([10, 11, 12], [2.0, 2.1, 2.0]), ([10, 11, 12], [3.0, 2.0, 4.0])
    text = timing_sentence(cached, full)
    assert text.startswith("At 1 of the 3 context lengths (11 tokens) the cached step was not faster.")
    assert "fixed costs paid once per call" in text
    assert timing_sentence(cached, ([10, 11, 12], [3.0, 3.0, 3.0])) == \
        "Here the cached step was faster at every one of the 3 context lengths."
