"""Numbers about attention patterns: statistics per head, attention rollout, comparisons of two patterns; and the
experiments that test what a head does: a corpus with labelled relations (corpus), a head's claim over it with
baselines (claims), heads knocked out inside the model's own forward (ablation, ablation_effects) and what each key
adds to a head's output (contribution)."""
