"""The positions page: sinusoidal and learned position embeddings, RoPE, and the permutation demo."""
