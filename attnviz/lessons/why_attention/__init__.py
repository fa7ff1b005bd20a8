"""The why-attention page: an RNN encoder–decoder that must pass the whole source through one fixed-size
vector, beside the same model with Bahdanau's additive attention over every source word; and a tiny BART.

    bottleneck.py  accuracy_against_length(), alignment(text), sentences(curve): the two GRU models
    tiny_bart.py   translate(text): attnviz-tiny-bart's greedy answer and its cross-attention
"""
