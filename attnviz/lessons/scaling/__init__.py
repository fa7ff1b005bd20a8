"""Scaling lab: why 1/sqrt(d_k): the experiments (variance, saturation, gradients) and their charts."""
