"""The positions page's RoPE on real Llama-family models: the model's own frequencies, and its trace's rotation."""

import json
from pathlib import Path

import pytest
import torch

import attnviz
from attnviz.engine.rope import rope_frequencies
from attnviz.engine.rope_types import rope_inverse_frequencies, rope_parameters
from attnviz.errors import AttnvizError
from attnviz.lessons.positions import rope_demo as rd

TEXT = "the cat sat on the mat and the dog"


def rotate_pairs_by_hand(x: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """(..., T, D): pair p = (x_p, x_{p+D/2}) at position t turned by t·θ_p with a 2 × 2 rotation, written out."""
    half = x.shape[-1] // 2
    angle = torch.arange(x.shape[-2]).float()[:, None] * inv_freq[None, :]  # (T, D/2)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], dim=-1)


@pytest.mark.parametrize("name", ["llama", "llama3-tied"])
def test_the_page_rotates_with_the_models_own_frequencies_and_the_trace_is_rotated(tiny_decoder_folder, name):
    folder = tiny_decoder_folder(name)
    model = attnviz.load_model(str(folder))
    config = json.loads((Path(folder) / "config.json").read_text())
    expected = rope_inverse_frequencies(rope_parameters(config), model.d_head)
    s = rd.rope_settings(model)
    assert s.from_model and s.d_head == model.d_head
    torch.testing.assert_close(s.inv_freq, expected, rtol=0, atol=0)
    plain = rope_frequencies(model.d_head, float(rope_parameters(config)["rope_theta"]))
    if name == "llama":
        assert s.theta == pytest.approx(500.0) and "θ = 500" in s.label
        torch.testing.assert_close(expected, plain)
    else:  # llama3 scaling: some frequencies divided by the factor, so not the plain base's
        assert s.theta is None and "llama3" in s.label
        assert not torch.allclose(expected, plain)
    res = model.run(TEXT, keep=True)
    rot = rd.model_rotation(res, s.inv_freq)
    assert rot.gap < 1e-5
    torch.testing.assert_close(rot.q_after, rotate_pairs_by_hand(rot.q_before, expected), rtol=1e-5, atol=1e-5)
    k_before = torch.stack([t.k_before_rope[0] for t in res.traces])  # (L, nkv, T, hs)
    torch.testing.assert_close(rot.k_after, rotate_pairs_by_hand(k_before, expected), rtol=1e-5, atol=1e-5)
    wrong = rd.model_rotation(res, rope_frequencies(model.d_head, 10000.0) * 3)
    assert wrong.gap > 1e-2  # another rotation would not match the model
    rows = rd.rotation_rows(rot, 0, 0, 1, s.inv_freq)
    assert len(rows) == len(res.tokens) and rows[3]["angle t·θ_p (rad)"] == round(3 * float(expected[1]), 4)


def test_a_model_without_rope_has_no_rotation_trace(minilm):
    with pytest.raises(AttnvizError, match="no RoPE"):
        rd.model_rotation(minilm.run("a cat", keep=True), rope_frequencies(32))


def test_the_rotation_keeps_each_pairs_length(tiny_decoder_folder):
    model = attnviz.load_model(str(tiny_decoder_folder("llama")))
    rot = rd.model_rotation(model.run(TEXT, keep=True), model.inv_freq)
    half = model.d_head // 2
    for row, t in zip(rd.rotation_rows(rot, 1, 2, 3, model.inv_freq), range(10), strict=False):
        after = rot.q_after[1, 2, t]
        assert row["pair length (before = after)"] == pytest.approx(float(torch.hypot(after[3], after[3 + half])), abs=1e-4)
