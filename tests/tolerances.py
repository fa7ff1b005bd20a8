"""The tolerances of the numeric checks, one per kind of check, each with why it is what it is. They hold on the CPU
and on CUDA alike: a GPU sums a float32 matrix product in another order than the CPU (cuBLAS splits long sums, and
picks kernels by shape), so two computations that are equal in exact arithmetic differ there by a few float32
roundings of the values they carry, where the CPU often happens to agree to the last bit.

float32's machine epsilon is 1.19e-7: a value of size s is carried to about s * 1.2e-7, and a sum of k terms
collects up to k such roundings (in practice about sqrt(k)).
"""

# Attention weights (after softmax, in [0, 1]) against transformers' eager attention, float32: the project's truth
# rule (docs/models.md, "How attnviz checks itself against transformers"). Measured on an NVIDIA H100: 4.6e-6 at
# most, against 1e-5.
WEIGHTS_VS_TRANSFORMERS = 1e-5

# Attention weights computed twice from inputs that are equal in exact arithmetic but not in float32 (queries and
# keys rotated, shifted or rescaled in ways that keep every q·k): scores of size up to ~100 carry ~1e-5 of rounding
# each, and softmax passes a score's error dw = w(1 - w) ds <= ds / 4 on to the weight. 1e-6 held on the CPU by
# luck of the summation order; an H100 gave 1.4e-6 (tests/analysis/test_qk_space.py).
WEIGHTS_REFORMULATED = 1e-5

# Hidden states (the residual stream, entries up to ~7 in attnviz-tiny-bart) against transformers' own, float32:
# compared as the app's live check compares them (attnviz/engine/truth.py, check_decoder_block_against_transformers),
# by the largest |difference| over the largest |entry| (at least 1), since float32 rounding grows with the values: a
# value near 7 is carried to 4.8e-7, and a layer adds a dozen such roundings through LayerNorm, two attentions and a
# feed-forward. An H100 gave 1.34e-5 in absolute terms on the decoder's layer 1 (1.9e-6 relative).
HIDDEN_VS_TRANSFORMERS_RELATIVE = 1e-5


def relative_gap(ours, theirs) -> float:
    """max |ours - theirs| / max(max |theirs|, 1): how HIDDEN_VS_TRANSFORMERS_RELATIVE is measured."""
    return float((ours - theirs).abs().max()) / max(float(theirs.abs().max()), 1.0)
