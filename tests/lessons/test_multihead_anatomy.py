"""Multi-head anatomy: the head split, Concat·W_O = Σ_h head_h·W_Oʰ, K/V heads averaged into groups, the KV cache."""

import pytest
import torch

import attnviz
from attnviz.engine.attention import masked_softmax
from attnviz.errors import AttnvizError
from attnviz.lessons.multihead import latex as tex
from attnviz.lessons.multihead.grouping import (
    PUBLISHED,
    check_groups,
    format_bytes,
    grouped_patterns,
    kv_cache_bytes,
    kv_cache_rows,
    kv_sharing,
    model_geometry,
    n_kv_heads,
)
from attnviz.lessons.multihead.heads import head_split
from attnviz.lessons.multihead.projection import output_projection
from attnviz.lessons.step_by_step.steps import attention_input

TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def minilm_run(minilm):
    return minilm.run(TEXT, keep=True)


@pytest.fixture(scope="module")
def toy_run(toy):
    return toy.run(TEXT, keep=True)


# ---- the reshape --------------------------------------------------------------------------------


def test_head_split_cuts_q_into_column_blocks_and_glues_it_back_exactly(minilm, minilm_run):
    split = head_split(minilm_run, 2)
    n = len(minilm_run.tokens)
    assert (split.d_model, split.n_heads, split.d_head) == (384, 12, 32)
    assert split.q.shape == (n, 384) and split.per_head.shape == (12, n, 32)
    torch.testing.assert_close(split.q[:, 32 * 5:32 * 6], split.per_head[5], rtol=0, atol=0)
    torch.testing.assert_close(split.per_head, minilm_run.traces[2].q[0], rtol=0, atol=0)
    assert split.round_trip_gap == 0.0
    assert list(split.columns_of(3)) == list(range(96, 128))


def test_head_split_on_a_missing_layer_or_an_unkept_run_is_a_clear_error(toy, toy_run):
    with pytest.raises(AttnvizError, match="layers 0 to 1"):
        head_split(toy_run, 2)
    with pytest.raises(AttnvizError, match="keep=True"):
        head_split(toy.run(TEXT), 0)


def test_reshape_latex_carries_the_real_and_the_papers_sizes():
    assert "384 = 12 \\cdot 32" in tex.size_split(384, 12, 32)
    assert "512 = 8 \\cdot 64" in tex.paper_split()
    chain = tex.reshape_chain(9, 384, 12, 32)
    assert "(9,\\ 384)" in chain and "(9,\\ 12,\\ 32)" in chain and "(12,\\ 9,\\ 32)" in chain


# ---- Concat · W_O = Σ_h head_h · W_Oʰ ------------------------------------------------------------


@pytest.mark.parametrize("which", ["minilm", "toy"])
def test_concat_times_w_o_equals_the_sum_over_heads(which, request):
    model = request.getfixturevalue(which)
    res = request.getfixturevalue(f"{which}_run")
    for layer in range(model.n_layers):
        proj = output_projection(model, res, layer)
        torch.testing.assert_close(proj.via_concat, proj.via_sum, rtol=1e-5, atol=1e-5)
        assert proj.gap < 1e-5
        # + b_O gives the layer's own attention output, as the stack computed it
        torch.testing.assert_close(proj.via_sum + proj.bias, res.traces[layer].attn_out[0], rtol=1e-5, atol=1e-5)
        assert proj.trace_gap < 1e-5


def test_contribution_norms_are_each_heads_block_of_w_o_applied_to_its_output(minilm, minilm_run):
    proj = output_projection(minilm, minilm_run, 1)
    norms = proj.contribution_norms
    assert norms.shape == (12, len(minilm_run.tokens))
    head_out = minilm_run.traces[1].head_outputs[0, 7]  # (T, 32)
    block = minilm.layers[1].w_o[32 * 7:32 * 8].cpu()  # W_O⁷ (32, 384), beside the trace on the CPU
    torch.testing.assert_close(norms[7], (head_out @ block).norm(dim=-1), rtol=1e-5, atol=1e-5)
    assert (norms > 0).all()
    torch.testing.assert_close(proj.contribution_shares.sum(dim=0), torch.ones(norms.shape[1]))


# ---- GQA: K/V heads averaged into groups -----------------------------------------------------------


def test_as_many_groups_as_heads_gives_back_the_original_patterns_exactly(minilm, minilm_run):
    gp = grouped_patterns(minilm, minilm_run, 3, 12)
    assert torch.equal(gp.grouped, gp.original)
    torch.testing.assert_close(gp.original, minilm_run.traces[3].weights[0], rtol=1e-5, atol=1e-5)
    assert gp.trace_gap < 1e-5 and gp.output_change == 0.0
    assert gp.group_of_head == list(range(12))
    assert float(gp.max_abs_change.max()) == 0.0 and float(gp.total_variation.max()) == 0.0
    assert float(gp.kl.abs().max()) == 0.0


def test_one_group_is_mqa_every_query_head_uses_the_mean_k(minilm, minilm_run):
    layer = 2
    gp = grouped_patterns(minilm, minilm_run, layer, 1)
    n = len(minilm_run.tokens)
    assert gp.grouped.shape == gp.original.shape == (12, n, n)
    assert gp.group_of_head == [0] * 12
    torch.testing.assert_close(gp.grouped.sum(dim=-1), torch.ones(12, n))
    # by hand: one K from the mean of the 12 heads' W_K and b_K
    lw, C = minilm.layers[layer].to(torch.device("cpu")), 384  # beside the trace, on the CPU
    x = attention_input(minilm, minilm_run.traces[layer], layer)
    w_q, w_k, _ = lw.w_qkv.split(C, dim=1)
    b_q, b_k, _ = lw.b_qkv.split(C)
    k = x @ w_k.view(C, 12, 32).mean(dim=1) + b_k.view(12, 32).mean(dim=0)  # (T, 32)
    q5 = x @ w_q[:, 160:192] + b_q[160:192]  # head 5's queries (T, 32)
    torch.testing.assert_close(gp.grouped[5], torch.softmax(q5 @ k.T / 32**0.5, dim=-1), rtol=1e-5, atol=1e-5)
    assert float(gp.max_abs_change.min()) > 0.01  # MiniLM was not trained with shared K/V: patterns move
    assert ((gp.total_variation > 0) & (gp.total_variation <= 1)).all() and (gp.kl > 0).all()


def test_three_groups_share_the_mean_k_of_four_consecutive_heads(minilm, minilm_run):
    layer, C = 4, 384
    gp = grouped_patterns(minilm, minilm_run, layer, 3)
    assert gp.group_of_head == [0] * 4 + [1] * 4 + [2] * 4
    lw = minilm.layers[layer].to(torch.device("cpu"))
    x = attention_input(minilm, minilm_run.traces[layer], layer)
    w_q, w_k, _ = lw.w_qkv.split(C, dim=1)
    b_q, b_k, _ = lw.b_qkv.split(C)
    k = x @ w_k[:, 128:256].reshape(C, 4, 32).mean(dim=1) + b_k[128:256].view(4, 32).mean(dim=0)  # heads 4..7
    q6 = x @ w_q[:, 192:224] + b_q[192:224]
    torch.testing.assert_close(gp.grouped[6], torch.softmax(q6 @ k.T / 32**0.5, dim=-1), rtol=1e-5, atol=1e-5)


def test_gqa_groups_consecutive_heads_and_keeps_the_mask(toy):
    model = toy  # 2 heads of 4: one group = MQA
    res = model.run(TEXT, mask="causal", keep=True)
    gp = grouped_patterns(model, res, 1, 1)
    n = len(res.tokens)
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    assert (gp.grouped[:, upper] == 0).all() and (gp.original[:, upper] == 0).all()
    x = attention_input(model, res.traces[1], 1)
    lw = model.layers[1].to(torch.device("cpu"))
    w_q, w_k, _ = lw.w_qkv.split(8, dim=1)
    k = x @ (w_k[:, :4] + w_k[:, 4:]) / 2  # toy biases are zero
    weights = masked_softmax((x @ w_q[:, 4:]) @ k.T / 2.0, ~upper)
    torch.testing.assert_close(gp.grouped[1], weights, rtol=1e-5, atol=1e-6)


def test_group_counts_that_do_not_divide_the_heads_are_a_clear_error(minilm, minilm_run):
    with pytest.raises(AttnvizError, match=r"5 groups do not divide the 12 heads.*1, 2, 3, 4, 6, 12"):
        grouped_patterns(minilm, minilm_run, 0, 5)
    for bad in (0, 13, 2.5, True, "3"):
        with pytest.raises(AttnvizError, match="whole number from 1 to 12"):
            check_groups(12, bad)
    assert [check_groups(12, g) for g in (1, 2, 3, 4, 6, 12)] == [1, 2, 3, 4, 6, 12]


def test_a_model_with_real_gqa_is_not_averaged_and_its_sharing_is_listed(tiny_decoder_folder):
    model = attnviz.load_model(str(tiny_decoder_folder("llama")))  # 4 query heads over 2 K/V heads
    assert n_kv_heads(model) == 2
    with pytest.raises(AttnvizError, match="already shares K/V heads"):
        grouped_patterns(model, model.run("the cat sat", keep=True), 0, 1)
    assert model_geometry(model).n_kv_heads == 2
    assert kv_sharing(model.n_heads, n_kv_heads(model)) == [[0, 1], [2, 3]]
    assert kv_sharing(32, 8)[1] == [4, 5, 6, 7] and len(kv_sharing(32, 8)) == 8
    assert kv_sharing(12, 12) == [[h] for h in range(12)] and kv_sharing(12, 1) == [list(range(12))]
    with pytest.raises(AttnvizError, match="do not divide"):
        kv_sharing(12, 5)


# ---- the KV cache ------------------------------------------------------------------------------


def test_kv_cache_bytes_follow_the_formula():
    assert kv_cache_bytes(32, 32, 128, 2, 4096) == 2 * 2**30  # Llama-2-7B, 4096 tokens in fp16: 2 GiB
    assert kv_cache_bytes(6, 12, 32, 4, 1) == 2 * 6 * 12 * 32 * 4
    llama70 = next(g for g in PUBLISHED if g.name == "Llama-2-70B")
    rows = kv_cache_rows(llama70, 2, 4096)
    assert [r.n_kv_heads for r in rows] == [64, 32, 16, 8, 4, 2, 1]
    assert rows[0].variant == "MHA" and rows[-1].variant == "MQA" and {r.variant for r in rows[1:-1]} == {"GQA"}
    own = [r for r in rows if r.is_models_own]
    assert len(own) == 1 and own[0].n_kv_heads == 8 and own[0].fraction_of_mha == pytest.approx(1 / 8)
    assert own[0].bytes == kv_cache_bytes(80, 8, 128, 2, 4096)
    with pytest.raises(AttnvizError, match="length"):
        kv_cache_rows(llama70, 2, 0)


def test_format_bytes_and_the_formula_latex():
    assert format_bytes(512) == "512 B" and format_bytes(2 * 2**30) == "2.00 GiB" and format_bytes(1536) == "1.50 KiB"
    latex = tex.kv_cache_formula(6, 12, 32, 2, 4096, kv_cache_bytes(6, 12, 32, 2, 4096))
    assert r"2 \cdot 6 \cdot 12 \cdot 32 \cdot 2 \cdot 4096 = 37\,748\,736" in latex
