"""The why-attention page: an RNN encoder–decoder that must pass the whole source through one fixed-size
vector, beside the same model with Bahdanau's additive attention over every source word; and a tiny BART."""
