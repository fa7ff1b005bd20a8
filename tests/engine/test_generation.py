"""model.generate: greedy decoding with and without the KV cache, against transformers' greedy generate.

The contract: g.token_ids = prompt ids + N new ids; g.steps[i].token and g.steps[i].attention
(n_layers, n_heads, n_prompt + i), the row of the query that chose the token; cache=False recomputes
the whole prefix and must agree with cache=True.
"""

import pytest
import torch
from helpers_tiny_models import TINY_DECODERS

import attnviz
from attnviz.engine.generation import MAX_NEW_TOKENS
from attnviz.engine.kv_cache import FLOAT32_BYTES, kv_cache_bytes_per_token, kv_cache_bytes_per_token_of_config
from attnviz.engine.truth import check_generation_against_transformers
from attnviz.errors import AttnvizError

N_NEW = 12
PROMPT = "The cat sat on the mat. A dog"
ATOL_ROW = 1e-5
NAMES = sorted(TINY_DECODERS) + ["gpt2"]


@pytest.fixture(scope="module")
def models(tiny_decoder_folder, tiny_model_folder):
    folder = lambda name: tiny_model_folder("gpt2") if name == "gpt2" else tiny_decoder_folder(name)
    return {name: attnviz.load_model(str(folder(name))) for name in NAMES}


@pytest.fixture(scope="module")
def generations(models):
    """name -> (with the cache, without it), N_NEW tokens each."""
    return {name: (m.generate(PROMPT, max_new_tokens=N_NEW, cache=True), m.generate(PROMPT, max_new_tokens=N_NEW, cache=False))
            for name, m in models.items()}


@pytest.mark.parametrize("name", NAMES)
def test_shapes_follow_the_contract(models, generations, name):
    model, (g, _) = models[name], generations[name]
    n_prompt = len(model.run(PROMPT).token_ids)
    assert g.n_prompt == n_prompt and len(g.token_ids) == len(g.tokens) == n_prompt + N_NEW
    assert g.token_ids[:n_prompt] == model.run(PROMPT).token_ids
    for i, step in enumerate(g.steps):
        assert step.attention.shape == (model.n_layers, model.n_heads, n_prompt + i)
        assert step.query.shape == (model.n_layers, model.n_heads, model.d_head)
        assert step.token_id == g.token_ids[n_prompt + i] and step.token == g.tokens[n_prompt + i]
        assert step.top_ids[0] == step.token_id and step.top_probs[0] >= step.top_probs[-1]
        assert torch.allclose(step.attention.sum(-1), torch.ones(model.n_layers, model.n_heads), atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_cached_and_uncached_decoding_agree(generations, name):
    cached, full = generations[name]
    assert cached.token_ids == full.token_ids
    for a, b in zip(cached.steps, full.steps, strict=True):
        assert (a.attention - b.attention).abs().max() <= ATOL_ROW
    last_rows = [s.attention[..., -1] for s in cached.steps]  # each step's weight on its newest key
    assert max((a - b).abs().max() for a, b in zip(last_rows[:-1], last_rows[1:], strict=True)) > 1e-3  # the rows really move


def test_most_models_write_varied_tokens(generations):
    # the tied random llama3 model repeats one token; the others must not, or token parity would prove little
    assert sum(len(set(cached.new_ids)) > 1 for cached, _ in generations.values()) >= len(NAMES) - 1


@pytest.mark.parametrize("name", NAMES)
def test_tokens_equal_transformers_greedy_generate(models, generations, name):
    check = check_generation_against_transformers(models[name], generations[name][0])
    assert len(check.theirs) == N_NEW
    assert check.matches, f"first difference at step {check.first_difference}"


def test_first_row_is_the_last_row_of_a_plain_run(models, generations):
    res = models["llama"].run(PROMPT)
    first = generations["llama"][0].steps[0].attention
    assert (first - res.attentions[:, :, -1, :]).abs().max() <= ATOL_ROW


def test_mistral_rows_keep_only_the_window(generations):
    for step in generations["mistral"][0].steps:
        assert (step.attention[..., : step.n_context - 5] == 0).all()
        assert (step.attention[..., -5:] > 0).all()


def test_cache_holds_rotated_keys_per_kv_head_and_its_size_matches_the_formula(models, generations):
    model, g = models["llama"], generations["llama"][0]
    n = len(g.token_ids) - 1  # the last chosen token is never fed back
    ids = torch.tensor([g.token_ids[:n]])
    with torch.inference_mode():
        _, _, traces = model.forward(ids, model.builtin_mask(n), True, keep=True)
    for i, step in enumerate(g.steps):  # each step's query is the row its last context token had in a full run
        # (a raw forward's traces stay on the model's device; a generation's records are on the CPU)
        torch.testing.assert_close(step.query, torch.stack([t.q[0, :, g.n_prompt + i - 1] for t in traces]).cpu(),
                                   atol=1e-5, rtol=0)
    for layer, cache in enumerate(g.kv):
        assert cache.keys.shape == cache.values.shape == (1, model.n_kv_heads, n, model.d_head)
        torch.testing.assert_close(cache.keys.cpu(), traces[layer].k_cached.cpu(), atol=1e-5, rtol=0)  # after RoPE, not repeated
        torch.testing.assert_close(cache.values.cpu(), traces[layer].v_cached.cpu(), atol=1e-5, rtol=0)
    total = sum(c.nbytes for c in g.kv)
    assert total == n * kv_cache_bytes_per_token(model.n_layers, model.n_kv_heads, model.d_head, FLOAT32_BYTES)
    assert model.n_kv_heads == model.n_heads // 2  # GQA: half the K/V heads, so half the cache of multi-head attention
    assert g.kv[0].nbytes == 2 * n * model.n_kv_heads * model.d_head * FLOAT32_BYTES


def test_cache_bytes_per_token_for_known_configs():
    # Llama 3 8B: 32 layers, 8 K/V heads of 128 (GQA over 32 query heads): 128 KiB per token in bf16
    assert kv_cache_bytes_per_token(32, 8, 128) == 131072
    llama3_8b = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}
    assert kv_cache_bytes_per_token_of_config(llama3_8b) == 131072
    mha = {k: v for k, v in llama3_8b.items() if k != "num_key_value_heads"}
    assert kv_cache_bytes_per_token_of_config(mha) == 4 * 131072
    with pytest.raises(AttnvizError, match="n_kv_heads"):
        kv_cache_bytes_per_token(32, 0, 128)
    with pytest.raises(AttnvizError, match="lacks"):
        kv_cache_bytes_per_token_of_config({"hidden_size": 4096})


# ---- bad requests ------------------------------------------------------------------------------


def test_an_encoder_cannot_generate(bundled_model):
    with pytest.raises(AttnvizError, match="encoder"):
        bundled_model.generate(PROMPT, max_new_tokens=3)


@pytest.mark.parametrize("n", [0, -1, MAX_NEW_TOKENS + 1, 2.0, "5", True, None])
def test_max_new_tokens_out_of_range(models, n):
    with pytest.raises(AttnvizError, match=f"1 to {MAX_NEW_TOKENS}"):
        models["llama"].generate(PROMPT, max_new_tokens=n)


def test_prompt_past_the_models_length(models):
    model = models["qwen2"]  # 96 positions
    with pytest.raises(AttnvizError, match="longer than"):
        model.generate("cat " * 200, max_new_tokens=1)
    n = len(model.run(PROMPT).token_ids)
    with pytest.raises(AttnvizError, match=f"at most {model.max_tokens - n}"):
        model.generate(PROMPT, max_new_tokens=model.max_tokens - n + 1)
    assert len(model.generate(PROMPT, max_new_tokens=model.max_tokens - n).token_ids) == model.max_tokens


def test_empty_prompt_is_refused(models):
    with pytest.raises(AttnvizError, match="empty"):
        models["gpt2"].generate("  ", max_new_tokens=2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_generation_on_cuda_equals_the_cpu(tiny_decoder_folder, generations):
    model = attnviz.load_model(str(tiny_decoder_folder("mistral")), device="cuda")
    g = model.generate(PROMPT, max_new_tokens=N_NEW)
    cpu = generations["mistral"][0]
    assert g.token_ids == cpu.token_ids
    assert max((a.attention - b.attention).abs().max() for a, b in zip(g.steps, cpu.steps, strict=True)) <= ATOL_ROW
