"""The Cross-attention page: a target text's queries reading a source text's keys and values.

views.py picks what can be shown for the model at hand (a real encoder–decoder's cross-attention, or
the labelled demonstration of across_sentences.py); latex.py writes the equation with the real shapes.
"""
