"""Multi-head anatomy on a real GQA model whose config sets head_dim (n_heads · d_head ≠ d_model)."""

import pytest
import torch

import attnviz
from attnviz.lessons.multihead import latex as tex
from attnviz.lessons.multihead.grouping import kv_sharing, sharing_in_trace
from attnviz.lessons.multihead.heads import head_split
from attnviz.lessons.multihead.projection import output_projection
from attnviz.lessons.step_by_step.steps import attention_input

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def llama(tiny_decoder_folder):
    return attnviz.load_model(str(tiny_decoder_folder("llama")))  # d_model 32, 4 heads × 16, 2 K/V heads


def test_split_acts_on_the_unrotated_projection_of_width_n_heads_times_d_head(llama):
    res = llama.run(TEXT, keep=True)
    t = res.traces[1]
    split = head_split(res, 1)
    assert (split.d_model, split.n_heads, split.d_head, split.width) == (32, 4, 16, 64)
    x = attention_input(llama, t, 1)  # RMSNorm(x)
    w_q = llama.layers[1].w_qkv[:, :64].cpu()  # (C, nh·hs), beside the trace on the CPU
    torch.testing.assert_close(split.q, x @ w_q, rtol=1e-5, atol=1e-5)  # Q = X W_Q, before RoPE
    assert split.round_trip_gap == 0.0
    assert not torch.allclose(split.per_head, t.q[0], atol=1e-3)  # the rotated q differs


def test_concat_wo_equals_the_sum_and_the_layers_output(llama):
    res = llama.run(TEXT, keep=True)
    proj = output_projection(llama, res, 0)
    assert proj.via_concat.shape == (len(res.tokens), 32) and proj.per_head.shape == (4, len(res.tokens), 32)
    assert proj.gap < 1e-5 and proj.trace_gap < 1e-5
    assert float(proj.bias.abs().max()) == 0.0  # Llama has no b_O


@pytest.mark.parametrize("name, expected", [("llama", [0, 0, 1, 1]), ("qwen2", [0, 0, 0, 0])])
def test_sharing_read_off_the_run_matches_h_div_group(tiny_decoder_folder, name, expected):
    model = attnviz.load_model(str(tiny_decoder_folder(name)))
    res = model.run(TEXT, keep=True)
    read, gap = sharing_in_trace(res, 1)
    assert read == expected == [h // (model.n_heads // model.n_kv_heads) for h in range(model.n_heads)]
    assert gap == 0.0
    assert [[h for h in range(model.n_heads) if read[h] == j] for j in range(model.n_kv_heads)] == \
        kv_sharing(model.n_heads, model.n_kv_heads)


def test_latex_says_what_w_q_maps_to_when_head_dim_is_set():
    assert r"4 \cdot 16 = 64 \neq d_{model} = 32" in tex.size_split(32, 4, 16)
    assert r"W_Q: 32 \to 64" in tex.size_split(32, 4, 16)
    chain = tex.reshape_chain(6, 32, 4, 16)
    assert r"(6,\ 64)}_{(n,\ h \cdot d_{head})}" in chain and r"\xrightarrow{\cdot\, W_O} (6,\ 32)" in chain
    assert "384 = 12 \\cdot 32" in tex.size_split(384, 12, 32) and "W_O" not in tex.reshape_chain(9, 384, 12, 32)
