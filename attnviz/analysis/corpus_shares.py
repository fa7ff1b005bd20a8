"""Over a whole corpus, how much of each head goes to [CLS], [SEP] and punctuation: its share of the weight beside its
share of the contribution norm (attnviz.analysis.contribution), over every real query of every sentence.

Its own module because it runs the corpus (attnviz.analysis.claims.run_corpus), and claims itself builds on
contribution (value_vector_norms): here both are below, and no module imports the other back.
"""

from __future__ import annotations

import torch

from attnviz.analysis.claims import run_corpus
from attnviz.analysis.contribution import shares_to_keys, special_keys


def corpus_special_shares(model, corpus, run=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight share, norm share), each (n_layers, n_heads): over every real query of every sentence of a corpus,
    the share of each head's weight, and of its contribution norm, that goes to [CLS], [SEP] and punctuation.
    run: a claims.CorpusRun of this corpus made with value_norms=True, if there is one (no pass is then made)."""
    run = run if run is not None and run.value_norms is not None else run_corpus(model, corpus, value_norms=True)
    T = run.attentions.shape[-1]
    keys = torch.stack([torch.cat([special_keys(list(s.tokens)), torch.zeros(T - len(s.tokens), dtype=torch.bool)])
                        for s in corpus.sentences])  # (B, T): padding is no key
    pairs = []
    for layer in range(run.attentions.shape[1]):
        weights = run.attentions[:, layer]  # (B, H, T, T)
        norms = weights * run.value_norms[:, layer, :, None, :]  # (B, H, T, T): α_ij ‖f_h(x_j)‖
        pairs.append(shares_to_keys(weights, norms, keys, run.real))
    return torch.stack([w for w, _ in pairs]), torch.stack([n for _, n in pairs])  # (L, nh) each
