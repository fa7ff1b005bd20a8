"""The encoder layer: one layer recomputed from its weights past W_O (steps), residual-stream norms over
layers (norms), LaTeX (latex) and charts (figures)."""
