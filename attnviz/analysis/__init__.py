"""Numbers about attention patterns: statistics per head, attention rollout, comparisons of two patterns."""
