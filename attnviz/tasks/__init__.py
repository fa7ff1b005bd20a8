"""The tasks attnviz's own models learn, with how their answers are scored: one home that the engine (reading a model's
words and digits), the training scripts and the lessons all use.

    number_words.py   numbers in words -> digits: the vocabulary, the examples, the tokenizer, the known-words check
    accuracy.py       exact-match accuracy of an encoder–decoder on that task, by source length
"""
