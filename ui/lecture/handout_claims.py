"""The handout's figures of the Head claims page, for the step's state: the claim over the corpus (claim), the
knock-out (knockout), weight against contribution (contribution). Their computations are the page's own, from the
server's shared caches (ui/head_claims_cache.py): a lecture that showed the step made them already; a first handout
runs the corpus once (12 s here) and a knock-out's forward passes (4 s)."""

from __future__ import annotations

import math
import re

from attnviz.analysis.ablation_effects import compare_with_same_size
from attnviz.analysis.claims import claim_score, head_table
from attnviz.analysis.contribution import contribution_norms
from attnviz.analysis.corpus import RELATIONS
from attnviz.draw.heatmap_svg import heatmap_svg
from attnviz.errors import AttnvizError
from attnviz.lecture.plan import Step
from attnviz.lessons.find_head import default_pair
from attnviz.lessons.head_claims.text import ablation_sentence, baseline_rows, claim_sentence, head_name, shares_sentence
from ui.head_claims_cache import (
    COMPARISONS,
    best_head,
    corpus_run,
    outcome_for,
    outcome_value,
    relation_scores,
    special_shares,
)
from ui.lecture.handout_parts import Figure, settings, table, token_at
from ui.lecture.step_state import StepRun
from ui.runs import model_for, run_for


def plain(markdown: str) -> str:
    """A page's sentence without its markdown marks (a caption is plain text)."""
    return re.sub(r"\*+", "", markdown)


def claimed_head(step: Step, run: StepRun, relation: str) -> tuple[int, int]:
    """The head under test: the step's hc_layer and hc_head, else the relation's best head (as the page opens)."""
    state = settings(step)
    if "hc_layer" in state or "hc_head" in state:
        return int(state.get("hc_layer", 0)), int(state.get("hc_head", 0))
    return best_head(run.model_spec, run.view.device, relation)


def claim(step: Step, run: StepRun) -> list[Figure]:
    spec, device = run.model_spec, run.view.device
    relation = settings(step).get("hc_relation", "coreference")
    corpus, problem = corpus_run(spec, device)
    if corpus is None:
        raise AttnvizError(problem)
    layer, head = claimed_head(step, run, relation)
    scores = relation_scores(spec, device, relation)
    score = claim_score(corpus, relation, layer, head, scores)
    rows = [(r["what"], "" if r["top key is labelled"] is None else f"{r['top key is labelled']:.0%}",
             "" if r["mean weight on it"] is None else f"{r['mean weight on it']:.3f}")
            for r in baseline_rows(scores, layer, head, score.rule_hit_rate)]
    hit = head_table(scores)[0].numpy()  # (L, H)
    n_layers, n_heads = hit.shape
    return [Figure(table(rows, ("what", "top key is labelled", "mean weight on it")), plain(claim_sentence(score, relation)),
                   "claim"),
            Figure(heatmap_svg(hit, [f"layer {i}" for i in range(n_layers)], [f"head {h}" for h in range(n_heads)],
                               title=f"top key is labelled (share), {RELATIONS[relation]}", x_title="head",
                               y_title="layer", ring_cell=(layer, head)),
                   f"Every head of {run.model.name} over the {score.n_items:,} labelled queries: the share whose "
                   f"largest weight goes to the labelled key; {head_name(layer, head)} ringed.", "claim")]


def knocked_heads(step: Step, run: StepRun) -> tuple[tuple[int, int], ...]:
    """The heads the step knocks out (hc_ablate, repeated), else the page's default: L1 H0 and L1 H1 in a decoder,
    the head under test in an encoder."""
    named = [v for k, v in step.state if k == "hc_ablate"]
    if not named:
        model = run.model
        named = (["L1 H0", "L1 H1"] if model.cfg.causal and model.n_layers > 1 and model.n_heads > 1 else
                 [head_name(*claimed_head(step, run, settings(step).get("hc_relation", "coreference")))])
    return tuple(sorted((int(n.split()[0][1:]), int(n.split()[1][1:])) for n in named))


def knockout(step: Step, run: StepRun) -> list[Figure]:
    spec, device, model = run.model_spec, run.view.device, run.model
    heads, kind = knocked_heads(step, run), settings(step).get("hc_kind", "zero")
    limit = 40 if model.cfg.causal else 12  # as the page: an encoder's knock-out runs 60 sentences, fewer sets
    outcome = outcome_for(spec, device)
    comparison = COMPARISONS.get((spec, device, heads, kind, limit), lambda: compare_with_same_size(
        model_for(spec, device), heads, lambda hs: outcome_value(spec, device, tuple(hs), kind), limit=limit))
    values = sorted(v for _, v in comparison.others)
    sampled = math.comb(model.n_layers * model.n_heads, len(heads)) - 1 > len(comparison.others)
    names = ", ".join(head_name(*h) for h in heads)
    rows = [("nothing knocked out", f"{comparison.baseline:.3f}"), (f"{names} knocked out", f"{comparison.chosen_value:.3f}")]
    if values:
        rows += [(f"the other {len(values)} sets of {len(heads)}: least damage", f"{values[0]:.3f}"),
                 ("… median", f"{values[len(values) // 2]:.3f}"), ("… most damage", f"{values[-1]:.3f}")]
    return [Figure(table(rows, ("", f"{outcome.name} ({outcome.unit})" if outcome.unit else outcome.name)),
                   plain(ablation_sentence(heads, kind, comparison.chosen_value, comparison.baseline,
                                           comparison.share_below, len(comparison.others), outcome.name, outcome.unit,
                                           outcome.chance, sampled)) + f" Outcome: {outcome.describe}", "knockout")]


def contribution(step: Step, run: StepRun) -> list[Figure]:
    """One query's weights beside the size of what each key adds, at the head under test, on the step's sentence
    (no mask, scaled: as the model was trained, as the page runs it)."""
    spec, device, view = run.model_spec, run.view.device, run.view
    relation = settings(step).get("hc_relation", "coreference")
    layer, head = claimed_head(step, run, relation)
    res = run_for(spec, device, view.text, "none", True, keep=True)
    labels = list(res.labels)
    query = token_at(step, "hc_query", labels, default_pair(labels)[0])
    alpha = res.traces[layer].weights[0, head, query].float().numpy()  # (n,)
    norms = contribution_norms(run.model, res.traces, layer)[0, head, query].float().numpy()  # (n,)
    row = [f"{query}: {labels[query]}"]
    said = ""
    if corpus_run(spec, device)[0] is not None:
        weight_share, norm_share = special_shares(spec, device)
        said = " " + plain(shares_sentence(layer, head, float(weight_share[layer, head]), float(norm_share[layer, head]),
                                           len(corpus_run(spec, device)[0].corpus.sentences)))
    return [Figure(heatmap_svg(alpha[None], row, labels, title=f"layer {layer}, head {head}: weight α (after softmax)"),
                   f"Each key's weight for the query {labels[query]} on “{view.text}”; they sum to 1.", "contribution"),
            Figure(heatmap_svg(norms[None], row, labels, title=f"layer {layer}, head {head}: ‖α·(x W_V + b_V) W_O‖"),
                   "The length of the vector each key actually adds to the query's output (Kobayashi et al. 2020): a "
                   "key can take much weight yet add little." + said, "contribution")]


def head_claims(step: Step, run: StepRun) -> list[Figure]:
    """The page's part the step's focus names (the claim when it names none)."""
    return {"knockout": knockout, "contribution": contribution}.get(step.focus, claim)(step, run)
