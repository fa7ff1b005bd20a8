"""The Head claims page's sentences, tables and links, built from attnviz.analysis's numbers only."""

from __future__ import annotations

from urllib.parse import urlencode

import torch

from attnviz.analysis.claims import RULES, ClaimScore, ItemScores, head_table
from attnviz.analysis.corpus import RELATIONS, Corpus, Item
from attnviz.lessons.explorer.selection import Selection

ABLATION_LIMITS = (
    "**What a knock-out shows, and what it cannot.** Setting a head's output to zero (or to its mean) and measuring "
    "the outcome shows what the model loses *without* that head, with everything else as it was. It cannot show "
    "everything a head does: another head may do the same work and cover for it, so a head can matter and its "
    "knock-out change little (that is why sets of heads are compared, not only single heads); and a knock-out can "
    "hurt because later layers never saw such a stream, not because the head did the job named after it."
)


def head_name(layer: int, head: int) -> str:
    return f"L{layer} H{head}"


def claim_sentence(score: ClaimScore, relation: str) -> str:
    """What the claim score says, in one markdown paragraph, against the column effect and the rule."""
    name = f"Layer {score.layer}, head {score.head}"
    text = (f"**{name}** gives its largest weight to the labelled key in **{score.hit_rate:.0%}** of "
            f"{score.n_items:,} labelled queries (“{RELATIONS[relation]}”); the mean weight on it is "
            f"**{score.mean_weight:.3f}**. The same key gets **{score.column_mean:.3f}** on average from the "
            f"sentence's *other* queries (the column effect): ")
    if score.column_mean >= 0.7 * score.mean_weight:
        text += "nearly as much, so this head looks at that key from everywhere, not from this query in particular. "
    else:
        text += f"{score.mean_weight / max(score.column_mean, 1e-9):.1f}× less, so the query matters. "
    text += (f"It ranks **{score.rank} of {score.n_heads}** heads. The positional rule “{RULES[relation]}”, which "
             f"reads no weights at all, is right in **{score.rule_hit_rate:.0%}**.")
    if score.by_reading:
        parts = [f"{v:.0%} when the {k.removeprefix('antecedent is the ')} is meant" for k, v in score.by_reading.items()]
        text += (f" Split by reading: {' and '.join(parts)}. A head that resolved the pronoun would do well on both "
                 "readings; one that always looks at the same noun scores well on one only.")
    return text


def baseline_rows(scores: ItemScores, layer: int, head: int, rule_rate: float) -> list[dict]:
    """The claim's figures beside its baselines: this head, the best other head, the median head, the column
    effect, and the positional rule."""
    hit, weight, column = head_table(scores)  # (L, H) each
    H = hit.shape[1]
    others = [(float(hit[f // H, f % H]), float(weight[f // H, f % H]), divmod(f, H)) for f in range(hit.numel())
              if divmod(f, H) != (layer, head)]
    best = max(others, key=lambda o: (o[0], o[1]))
    median_hit = float(torch.tensor([o[0] for o in others]).median())
    median_weight = float(torch.tensor([o[1] for o in others]).median())
    return [
        {"what": f"this head, {head_name(layer, head)}", "top key is labelled": float(hit[layer, head]),
         "mean weight on it": float(weight[layer, head])},
        {"what": f"the best other head, {head_name(*best[2])}", "top key is labelled": best[0],
         "mean weight on it": best[1]},
        {"what": f"the median of the other {len(others)} heads", "top key is labelled": median_hit,
         "mean weight on it": median_weight},
        {"what": "column effect: the same key, from the other queries", "top key is labelled": None,
         "mean weight on it": float(column[layer, head])},
        {"what": f"rule: {RULES[scores.relation]}", "top key is labelled": rule_rate, "mean weight on it": None},
    ]


def explorer_link(corpus: Corpus, item: Item, layer: int, head: int, model_choice: str) -> str:
    """A relative link that opens the explorer on this sentence, layer and head, the labelled cell selected."""
    sentence = corpus.sentences[item.sentence]
    labels = list(sentence.tokens)
    params = {"text": sentence.text, "model": model_choice, "layer": str(layer), "heads": str(head),
              **Selection(head=head, query=item.query, key=item.keys[0]).as_params(labels)}
    return "./?" + urlencode(params)


def failing_rows(corpus: Corpus, scores: ItemScores, failing: tuple[int, ...], layer: int, head: int,
                 model_choice: str, limit: int = 30) -> list[dict]:
    """The first `limit` labelled queries where the head's most-weighted key is not the labelled one."""
    rows = []
    for n in failing[:limit]:
        item = scores.items[n]
        tokens = corpus.sentences[item.sentence].tokens
        top = int(scores.top_keys[n, layer, head])
        rows.append({"sentence": corpus.sentences[item.sentence].text,
                     "query": f"{tokens[item.query]} ({item.query})",
                     "labelled": ", ".join(f"{tokens[k]} ({k})" for k in item.keys),
                     "head's top key": f"{tokens[top]} ({top})",
                     "weight on labelled": float(scores.weights[n, layer, head]),
                     "open": explorer_link(corpus, item, layer, head, model_choice)})
    return rows


def ablation_sentence(heads, kind: str, value: float, baseline: float, share_below: float, n_others: int,
                      outcome_name: str, unit: str, chance: float | None, sampled: bool) -> str:
    names = ", ".join(head_name(*h) for h in heads)
    size = "single heads" if len(heads) == 1 else f"sets of {len(heads)}"
    sets = f"{'a seeded sample of ' if sampled else 'all '}{n_others} other {size}"
    text = (f"Knocking out **{names}** ({kind}-ablation) moves the {outcome_name} from **{baseline:.3f}** to "
            f"**{value:.3f}**{' ' + unit if unit else ''}. Of {sets}, **{share_below:.0%}** do less damage.")
    if chance is not None:
        text += f" Chance (a uniform guess over the vocabulary) is ln V ≈ {chance:.2f} nats."
    return text


def shares_sentence(layer: int, head: int, weight_share: float, norm_share: float, n_sentences: int) -> str:
    return (f"Over the {n_sentences} sentences, **{weight_share:.0%}** of layer {layer}, head {head}'s weight goes to "
            f"[CLS], [SEP] and punctuation, but only **{norm_share:.0%}** of the size of what it adds "
            "(‖α·v·W_O‖): weight is not importance." if norm_share < weight_share else
            f"Over the {n_sentences} sentences, {weight_share:.0%} of layer {layer}, head {head}'s weight goes to "
            f"[CLS], [SEP] and punctuation, and {norm_share:.0%} of the size of what it adds (‖α·v·W_O‖).")
