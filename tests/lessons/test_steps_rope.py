"""Step by step on RoPE models (Llama: GQA 4 over 2; Qwen2: MQA with q/k/v biases): every step equals the trace."""

import numpy as np
import pytest
import torch

import attnviz
from attnviz.lessons.step_by_step.figures import step_matrix
from attnviz.lessons.step_by_step.latex import step_cards
from attnviz.lessons.step_by_step.steps import attention_input, head_steps, output_projection_gap, pair_detail

TEXT = "the cat sat on the mat and the dog"


def turn_pairs(x: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """(T, D): pair (x_p, x_{p+D/2}) of row t turned by t·θ_p with a 2 × 2 rotation, written out."""
    half = x.shape[-1] // 2
    angle = torch.arange(x.shape[0]).float()[:, None] * inv_freq[None, :]  # (T, D/2)
    a, b = x[:, :half], x[:, half:]
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], dim=-1)


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def decoder(request, tiny_decoder_folder):
    return attnviz.load_model(str(tiny_decoder_folder(request.param)))


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 3)])
def test_rope_steps_equal_the_models_trace(decoder, layer, head):
    res = decoder.run(TEXT, keep=True)
    t = res.traces[layer]
    s = head_steps(decoder, res, layer, head)
    r = decoder.n_heads // decoder.n_kv_heads
    assert s.rope and s.kv_head == head // r and s.n_kv_heads == decoder.n_kv_heads
    # Q and K before RoPE are X W (+ b), with X = RMSNorm(x); K from the K/V head this query head shares
    lw, hs = decoder.layers[layer].to(torch.device("cpu")), decoder.d_head  # beside the trace, on the CPU
    x = attention_input(decoder, t, layer)
    nh, nkv = decoder.n_heads, decoder.n_kv_heads
    qkv = x @ lw.w_qkv + (0 if lw.b_qkv is None else lw.b_qkv)  # (T, (nh + 2nkv)·hs)
    q_all, k_all, v_all = qkv.split([nh * hs, nkv * hs, nkv * hs], dim=1)
    torch.testing.assert_close(s.q_before, q_all[:, head * hs:(head + 1) * hs], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s.k_before, k_all[:, s.kv_head * hs:(s.kv_head + 1) * hs], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s.v, v_all[:, s.kv_head * hs:(s.kv_head + 1) * hs], rtol=1e-5, atol=1e-5)
    # after RoPE: the 2 × 2 turn of every pair, and what the model itself used
    torch.testing.assert_close(s.q, turn_pairs(s.q_before, decoder.inv_freq.cpu()), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s.k, turn_pairs(s.k_before, decoder.inv_freq.cpu()), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s.q, t.q[0, head])
    torch.testing.assert_close(s.k, t.k_cached[0, s.kv_head])
    assert not torch.allclose(s.q, s.q_before, atol=1e-3)
    torch.testing.assert_close(s.scores, s.q @ s.k.T, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s.weights, res.attentions[layer, head])
    assert not s.allowed[0, 1] and s.allowed[1, 0]  # causal
    assert output_projection_gap(s, 3)[2] < 1e-5
    assert s.concat.shape == (len(res.tokens), nh * hs)


def test_the_dot_product_term_by_term_uses_the_rotated_vectors(decoder):
    res = decoder.run(TEXT, keep=True)
    s = head_steps(decoder, res, 1, 1)
    p = pair_detail(s, 5, 2)
    torch.testing.assert_close(p.products, s.q[5] * s.k[2])
    assert float(p.products.sum()) == pytest.approx(p.dot, abs=1e-5)
    assert float((s.q_before[5] * s.k_before[2]).sum()) != pytest.approx(p.dot, abs=1e-3)
    assert p.weight == pytest.approx(float(res.attentions[1, 1, 5, 2]), abs=1e-7)


def test_cards_name_the_rope_step_and_the_shared_kv_head(decoder):
    cards = step_cards(9, decoder.d_model, decoder.d_head, decoder.n_heads, 3, 0.25, True, True,
                       n_kv_heads=decoder.n_kv_heads)
    assert [c.key for c in cards][:4] == ["x", "qkv", "rope", "scores"] and len(cards) == 10
    r = decoder.n_heads // decoder.n_kv_heads
    assert f"query head 3 reads K/V head 3 // {r} = {3 // r}" in cards[1].text
    assert r"\mathrm{RMSNorm}" in cards[0].latex and r"\cos t\theta_p" in cards[2].latex
    assert [c.key for c in step_cards(9, 16, 4, 4, 0, 0.5, False, False)][:3] == ["x", "qkv", "scores"]
    s = head_steps(decoder, decoder.run(TEXT, keep=True), 0, 2)
    m = step_matrix(s, "Q_before")
    assert "before RoPE" in m.title
    np.testing.assert_array_equal(m.matrix, s.q_before.numpy())
    assert "K/V head" in step_matrix(s, "K").title and "after RoPE" in step_matrix(s, "K").title


def test_the_score_heatmap_title_has_the_primes_of_its_heading(decoder):
    """The card reads Q′ K′ᵀ (RoPE turned Q and K): the heatmap under it says so too."""
    s = head_steps(decoder, decoder.run(TEXT, keep=True), 0, 1)
    cards = step_cards(9, decoder.d_model, decoder.d_head, decoder.n_heads, 1, 0.25, True, True,
                       n_kv_heads=decoder.n_kv_heads)
    assert next(c for c in cards if c.key == "scores").title == "Q′ K′ᵀ"
    assert step_matrix(s, "scores").title.startswith("S = Q′ K′ᵀ (")
