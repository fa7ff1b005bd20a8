"""Step by step: one head from X to W_O (steps), its matrices drawn (figures) and its arithmetic in LaTeX (latex)."""
