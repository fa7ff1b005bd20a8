"""attnviz-tiny-bart on the same task: greedy translation with attnviz's from-scratch BART, and its attentions.

BART's output layer is its token embedding table read backwards (tied): logits_t = y_t · Eᵀ (+ final_logits_bias,
which stays zero in this model: it is a buffer training never changes). Greedy decoding starts from BART's
decoder start token </s>, writes <s>, then the digits, and stops at </s>.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

from attnviz.engine.masks import causal_mask
from attnviz.engine.models import load_model
from attnviz.engine.models.seq2seq import decoder_layer_forward
from attnviz.errors import AttnvizError
from attnviz.tasks.number_words import check_known_words, digits_text

TINY_BART = "attnviz-tiny-bart"
MAX_OUTPUT = 40  # tokens: the task's longest target is 32


@dataclass
class BartTranslation:
    source_labels: list[str]  # <s> words </s>
    output_tokens: list[str]  # what greedy decoding wrote, <s> and </s> excluded
    output_text: str  # '342007, 90'
    decoder_labels: list[str]  # the decoder's input positions: </s> <s> digits (the rows of its attentions)
    cross_attentions: torch.Tensor  # (decoder layers, heads, n_decoder, n_source), rows sum to 1
    decoder_attentions: torch.Tensor  # (decoder layers, heads, n_decoder, n_decoder), causal


@lru_cache(maxsize=1)
def tiny_bart():
    """load_model('attnviz-tiny-bart'), loaded once (SHA-256 checked)."""
    return load_model(TINY_BART)


@torch.inference_mode()
def greedy_ids(model, source_ids: list[int], max_len: int = MAX_OUTPUT) -> list[int]:
    """Greedy decoding with the from-scratch BART: the ids written after the start token, </s> included if reached."""
    enc_out, _, _ = model.forward(torch.tensor([source_ids], device=model.device), None, True, keep=False)  # (1, S, C)
    ids = [model.decoder_start_id]
    eos = model.decoder_start_id  # BART starts the decoder with </s>, the same token that ends it
    for _ in range(max_len):
        y = model.dec_embedder(torch.tensor([ids], device=model.device))  # (1, T, C)
        mask = causal_mask(len(ids)).to(model.device)
        for lw, cw in zip(model.dec_layers, model.cross_layers, strict=True):
            y, _, _ = decoder_layer_forward(y, enc_out, lw, cw, model.dec_cfg, mask, True)
        logits = y[0, -1] @ model.dec_embedder.word.T  # tied output layer                    (V,)
        ids.append(int(logits.argmax()))
        if ids[-1] == eos:
            break
    return ids[1:]


def translate(source: str, model=None) -> BartTranslation:
    """Greedy translation of `source`, then one run over (source, output) for every attention the page draws."""
    model = model or tiny_bart()
    check_known_words(model.tokenizer.backend, source, model.name)
    enc = model.encode(source)
    if all(t in model.tokenizer.special for t in enc.tokens):
        raise AttnvizError("Type a number in words, for example 'three hundred forty two'.")
    out = greedy_ids(model, enc.ids)
    tokens = [model.tokenizer.token_of(i)[0] for i in out]
    body = [t for t in tokens if t not in model.tokenizer.special]
    if not body:
        raise AttnvizError(f"{model.name} wrote no digits for this text.")
    res = model.run(source, target=" ".join(body))
    return BartTranslation(res.source_labels, body, digits_text(body), res.labels, res.cross_attentions,
                           res.attentions)


def exact_match(model, examples) -> list[bool]:
    """True where the from-scratch greedy output is exactly '<s> digits </s>' of the example's target."""
    hits = []
    for ex in examples:
        want = model.encode(ex.target).ids  # <s> digits </s>
        hits.append(greedy_ids(model, model.encode(ex.source).ids, len(want) + 1)[:len(want)] == want)
    return hits
