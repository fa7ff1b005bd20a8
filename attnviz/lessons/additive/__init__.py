"""The additive vs dot-product page: Bahdanau's scoring beside scaled dot-product, and what each costs."""
