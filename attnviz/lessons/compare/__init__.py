"""Compare: the two sides' settings (sides) and the difference and KL charts (figures)."""
