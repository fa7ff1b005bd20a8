"""The RoPE demo: pairs turn on a circle, and the score of a rotated q and k sees only i − j."""

import math
from types import SimpleNamespace

import pytest
import torch

from attnviz.engine.rope import rope_frequencies
from attnviz.errors import AttnvizError
from attnviz.lessons.positions import rope_demo as rd


def hand_rotated_score(q, k, i, j, theta):
    """R(i)q · R(j)k with explicit 2×2 rotations of each pair (p, p + D/2), in float64."""
    D = q.shape[0]
    total = 0.0
    for p in range(D // 2):
        w = theta ** (-2 * p / D)
        a, b = float(q[p]), float(q[p + D // 2])
        c, d = float(k[p]), float(k[p + D // 2])
        qa, qb = a * math.cos(i * w) - b * math.sin(i * w), a * math.sin(i * w) + b * math.cos(i * w)
        kc, kd = c * math.cos(j * w) - d * math.sin(j * w), c * math.sin(j * w) + d * math.cos(j * w)
        total += qa * kc + qb * kd
    return total


def test_score_table_equals_explicit_rotations():
    q, k = rd.seeded_query_key(16, seed=3)
    table = rd.rope_score_table(q, k, 9, rope_frequencies(16, 500.0))
    for i, j in [(0, 0), (2, 7), (8, 1), (5, 5)]:
        assert abs(float(table[i, j]) - hand_rotated_score(q, k, i, j, 500.0)) < 1e-4


@pytest.mark.parametrize(("d", "theta", "shift"), [(8, 10000.0, 3), (32, 10000.0, 40), (64, 500000.0, 100)])
def test_score_depends_on_i_minus_j_only(d, theta, shift):
    q, k = rd.seeded_query_key(d, seed=1)
    inv_freq = rope_frequencies(d, theta)
    assert rd.shift_difference(q, k, 12, shift, inv_freq) < 1e-4
    table = rd.rope_score_table(q, k, 12, inv_freq)
    assert rd.diagonal_spread(table) < 1e-4
    assert float(table[5, 2] - table[5, 3]).__abs__() > 1e-3  # but the distance itself matters


def test_added_sinusoids_are_not_relative():
    q, k = rd.seeded_query_key(32, seed=0)
    assert rd.diagonal_spread(rd.added_positions_score_table(q, k, 12)) > 0.1


def test_pair_track_stays_on_its_circle_and_turns_by_theta_p():
    q, _ = rd.seeded_query_key(16, seed=2)
    for pair in (0, 3, 7):
        track = rd.pair_track(q, pair, 6)  # (6, 2)
        radius = torch.linalg.norm(track, dim=1)
        assert torch.allclose(radius, radius[0].expand(6), atol=1e-5)
        step = rd.pair_angle_step(16, pair)
        assert step == pytest.approx(10000 ** (-2 * pair / 16), rel=1e-6)  # the default θ = 10000
        angles = torch.atan2(track[:, 1], track[:, 0]).double()
        turn = torch.remainder(angles[1:] - angles[:-1], 2 * math.pi)
        assert torch.allclose(turn, torch.full_like(turn, step % (2 * math.pi)), atol=1e-5)
        assert track[0].tolist() == pytest.approx([float(q[pair]), float(q[pair + 8])])  # position 0 does not turn


def test_rope_settings_use_the_models_own_rotation_when_it_has_one(minilm):
    s = rd.rope_settings(minilm)
    assert (s.theta, s.d_head, s.from_model) == (10000.0, 32, False) and "no RoPE" in s.label
    assert torch.equal(s.inv_freq, rope_frequencies(32, 10000.0))
    # a Llama-family model (another branch adds them) carries its own frequencies in cfg.inv_freq
    own = rope_frequencies(64, 500000.0)
    fake = SimpleNamespace(name="tiny-llama", d_head=64, cfg=SimpleNamespace(inv_freq=own, rope_type="default"))
    s = rd.rope_settings(fake)
    assert (s.theta, s.d_head, s.from_model) == (500000.0, 64, True) and "θ = 500000" in s.label
    assert torch.equal(s.inv_freq, own)
    scaled = SimpleNamespace(name="llama3", d_head=64, cfg=SimpleNamespace(inv_freq=own / 8, rope_type="llama3"))
    s = rd.rope_settings(scaled)
    assert s.theta is None and s.from_model and "llama3" in s.label
    q, k = rd.seeded_query_key(64)
    # the model's own (rescaled) frequencies are the ones used: a different table from the plain base's
    assert not torch.allclose(rd.rope_score_table(q, k, 6, s.inv_freq), rd.rope_score_table(q, k, 6, own))
    assert rd.shift_difference(q, k, 6, 9, s.inv_freq) < 1e-4


def test_bad_rope_inputs_are_clear_errors():
    q, k = rd.seeded_query_key(8)
    for call in (lambda: rd.seeded_query_key(7), lambda: rd.seeded_query_key(0), lambda: rd.pair_track(q, 4, 5),
                 lambda: rd.rope_score_table(q, k, 0), lambda: rd.rope_score_table(q, k, 1000),
                 lambda: rd.shift_difference(q, k, 10, 250), lambda: rd.shift_difference(q, k, 10, -1),
                 lambda: rd.rope_score_table(q, k, 4, rope_frequencies(16))):
        with pytest.raises(AttnvizError):
            call()
