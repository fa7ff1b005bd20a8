"""attnviz.engine.rope against transformers' own rotary code, and the property that makes it useful."""

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from attnviz.engine.rope import apply_rope, rope_angles, rope_frequencies


def test_rotation_equals_transformers_llama_rotary():
    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, rope_theta=50000.0)
    q, k = torch.randn(1, 4, 7, 16, generator=torch.Generator().manual_seed(0)).unbind(0)[0], torch.randn(4, 7, 16)
    pos = torch.arange(7)[None]
    cos_ref, sin_ref = LlamaRotaryEmbedding(cfg)(q[None], pos)
    q_ref, k_ref = apply_rotary_pos_emb(q[None], k[None], cos_ref, sin_ref)
    cos, sin = rope_angles(torch.arange(7), rope_frequencies(16, 50000.0))
    torch.testing.assert_close(apply_rope(q, cos, sin), q_ref[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(apply_rope(k, cos, sin), k_ref[0], atol=1e-6, rtol=0)


def test_rotated_score_depends_only_on_the_distance():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(32, generator=g), torch.randn(32, generator=g)
    cos, sin = rope_angles(torch.arange(40), rope_frequencies(32))
    score = lambda i, j: float(apply_rope(q, cos[i], sin[i]) @ apply_rope(k, cos[j], sin[j]))
    assert abs(score(5, 2) - score(30, 27)) < 1e-4
    assert abs(score(5, 2) - score(5, 3)) > 1e-3
