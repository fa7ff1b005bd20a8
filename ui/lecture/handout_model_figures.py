"""The handout's figures of the pages that run the shared model (or a model the step names) on the step's sentence:
each the page's own figure for the step's state (its layer, head, tokens and the page's defaults where the step names
none), computed by the same lessons as the page and drawn static. Each says which of the page's figures it is (its
focus id), where the page names one."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.head_search import allowed_keys, pair_weights, rank_heads_for_pair
from attnviz.analysis.qk_space import head_queries_and_keys, strongest_pairs
from attnviz.draw.heatmap_svg import heatmap_svg
from attnviz.draw.line_chart import CSS as LINE_CSS
from attnviz.draw.line_chart import line_chart_svg
from attnviz.draw.plane_svg import plane_svg
from attnviz.lecture.kinds.base import bare
from attnviz.lecture.plan import Step
from attnviz.lessons.additive import scoring as sc
from attnviz.lessons.efficient.compare import MAX_PATTERN_N, compare
from attnviz.lessons.efficient.method import cap_knobs, knob_default
from attnviz.lessons.efficient.methods import METHODS
from attnviz.lessons.encoder_layer.norms import stream_norms
from attnviz.lessons.encoder_layer.steps import layer_steps
from attnviz.lessons.find_head import default_pair, ranking_rows, token_name
from attnviz.lessons.induction.probe import probe, random_repeated_ids, text_twice_ids
from attnviz.lessons.kv_cache.decoding import writes_text
from attnviz.lessons.multihead.grouping import kv_sharing, sharing_in_trace
from attnviz.lessons.positions.permutation import permutation_demo, what_breaks_it
from attnviz.lessons.qk_space import plane_of
from attnviz.lessons.step_by_step.figures import step_matrix
from attnviz.lessons.step_by_step.steps import head_steps
from ui import runs
from ui.lecture.handout_parts import Figure, head_of, settings, side_by_side, table, token_at
from ui.lecture.step_state import StepRun
from ui.memo import shared

TINY_LLAMA = "attnviz-tiny-llama"  # the Induction heads page's model when the step's cannot write text


def settings_said(run: StepRun) -> str:
    """'on “text” (mask …, scaled by 1/√d_k)': the run's settings, its mask as applied. A decoder applies its own
    causal mask whatever the spec adds (attnviz/engine/mask_rule.py): a tiny-llama run was captioned "mask none"."""
    v = run.view
    mask = v.mask_spec if not run.model.cfg.causal else \
        "causal, the model's own" + ("" if v.mask_spec in ("none", "causal") else f", and {v.mask_spec}")
    return f"on “{v.text}” (mask {mask}, {'scaled by 1/√d_k' if v.scale is True else 'scale ' + str(v.scale)})"


def shared_run(step: Step, run: StepRun) -> list[Figure]:
    """The model's attention for the step's state: the question's head (its query's row ringed), else the head the
    state names."""
    res = run.run()
    layer, heads, query = head_of(step)
    n_layers, n_heads = res.attentions.shape[:2]
    layer, heads = min(layer, n_layers - 1), tuple(h for h in heads if h < n_heads) or (0,)
    weights = res.attentions[layer, list(heads)].float().mean(dim=0).numpy()  # (n_q, n_k)
    tokens = list(res.tokens)
    ring = next((i for i, t in enumerate(tokens) if bare(t) == bare(query)), None) if query else None
    which = f"layer {layer}, head {heads[0]}" if len(heads) == 1 else f"layer {layer}, the mean of heads " + \
        ", ".join(map(str, heads))
    said = (f"{run.model.name}'s attention weights after softmax, {which}, {settings_said(run)}. Rows are queries, "
            "columns keys; each row sums to 1." + (f" The row of “{tokens[ring]}” is ringed." if ring is not None else ""))
    return [Figure(heatmap_svg(weights, tokens, tokens, title=f"{run.model.name}: {which}", ring_row=ring), said,
                   "head" if step.page == "" else "")]


def qk_plane(step: Step, run: StepRun) -> list[Figure]:
    """The Query–key space page's plane: one head's queries and keys by PCA (shared space unless the step says raw),
    lines for the pairs of weight ≥ qk_threshold (0.3), the qk_row query's row red."""
    state, view = settings(step), run.view
    res = view.run(keep=True)
    layer, (head,), _ = head_of(step)
    labels = list(res.labels)
    row = token_at(step, "qk_row", labels, -1) if state.get("qk_row", "none") != "none" else -1
    qk = head_queries_and_keys(view.model, res, layer, head)
    plane = plane_of(qk, state.get("qk_space", "shared"))
    weights = res.attentions[layer, head]  # (n, n)
    threshold = float(state.get("qk_threshold", 0.3))
    pairs = [(p.query, p.key, p.weight) for p in strongest_pairs(weights, threshold)[:150]]
    if row >= 0:  # the highlighted query's lines, as the page draws them: every key it gives 0.02 or more
        pairs = [p for p in pairs if p[0] != row] + [(row, j, float(weights[row, j])) for j in range(len(labels))
                                                     if float(weights[row, j]) >= 0.02]
    shares = plane.pca.explained
    svg = plane_svg(plane.pca.q_xy.numpy(), plane.pca.k_xy.numpy(), labels, pairs, selected=row if row >= 0 else None,
                    title=f"{view.model.name}, layer {layer} head {head}: queries and keys by PCA",
                    x_title=f"PC 1 ({100 * shares[0]:.1f}%)", y_title=f"PC 2 ({100 * shares[1]:.1f}%)")
    return [Figure(svg, f"One point per token's query (circle) and key (diamond), projected together onto the plane "
                   f"that keeps most of their spread ({100 * plane.pca.explained_total:.1f}%), {settings_said(run)}. "
                   f"Lines join the pairs with weight ≥ {threshold:.2f}, darker for more weight"
                   + (f"; the row of “{labels[row]}” in red." if row >= 0 else "."), "plane")]


def chain(step: Step, run: StepRun) -> list[Figure]:
    """The Step by step page's chain for its head (sbs_head) and layer: Q, K, V, the scaled (and masked) scores, the
    weights and the head's output."""
    view = run.view
    res = view.run(keep=True)
    head = int(settings(step).get("sbs_head", 0))
    steps = head_steps(view.model, res, view.layer, head)
    numbers = view.model.d_head <= 8 and len(res.labels) <= 24
    keys = ["Q", "K", "V", "scaled", *(["masked"] if steps.masked else []), "weights", "head"]
    drawn = {}
    for key in keys:
        m = step_matrix(steps, key, numbers)
        columns = m.col_labels or [str(j) for j in range(m.matrix.shape[1])]
        drawn[key] = heatmap_svg(m.matrix, m.row_labels, columns, title=m.title, kind=m.kind, limit=m.limit,
                                 x_title=m.x_title, y_title="token")
    said = (f"{view.model.name}, layer {view.layer}, head {head}, {settings_said(run)}: X → Q, K, V → the scaled "
            "scores S′ = Q Kᵀ · s → softmax → A → the head's output A V. Blue = negative, red = positive; the weights "
            "run white (0) to blue.")
    return [Figure(side_by_side(drawn.pop("Q"), drawn.pop("K"), drawn.pop("V")), "", "chain"),
            Figure(side_by_side(*drawn.values()), said, "chain")]


def heads_shared(step: Step, run: StepRun) -> list[Figure]:
    """Multi-head anatomy: for a model that really shares K/V heads, which query heads read which (read off the run,
    the page's gqa table); else the patterns of the layer's heads the step names (at most four)."""
    view = run.view
    model, layer = view.model, view.layer
    res = view.run(keep=True)
    nh, n_kv = model.n_heads, model.n_kv_heads
    if n_kv < nh:
        read, gap = sharing_in_trace(res, layer)
        rows = [(j, ", ".join(map(str, qs)), ", ".join(str(h) for h in range(nh) if read[h] == j))
                for j, qs in enumerate(kv_sharing(nh, n_kv))]
        return [Figure(table(rows, ("K/V head", "query heads that read it", "found in this run")),
                       f"{model.name} has {nh} query heads and {n_kv} K/V heads: query head h reads K/V head h // "
                       f"{nh // n_kv}. The last column is read off layer {layer}'s own run {settings_said(run)}: each "
                       f"query head's K and V against the cached K/V heads (max difference {gap:.1e}).", "gqa")]
    labels = list(res.labels)
    return [Figure(heatmap_svg(res.attentions[layer, h].float().numpy(), labels, labels,
                               title=f"{model.name}: layer {layer}, head {h}"),
                   f"Head {h} of {nh}: its own weights after softmax, {settings_said(run)}.")
            for h in list(view.heads)[:4]]


def shuffle(step: Step, run: StepRun) -> list[Figure]:
    """Positions' permutation test: the step's model and its counterpart (toy / toy-nopos), the words shuffled and
    the rows put back; the difference maps on one colour scale, and the largest differences."""
    state, view = settings(step), run.view
    spec = view.model_spec
    partner = "toy" if spec == "toy-nopos" else "toy-nopos"
    seed, layer, head = int(state.get("pos_seed", 0)), int(state.get("pos_layer", 0)), int(state.get("pos_head", 0))
    results = [permutation_demo(runs.model_for(s, view.device), view.text, seed) for s in (spec, partner)]
    diffs = [r.head_difference(layer, head).float().numpy() for r in results]  # each (T, T)
    limit = max(max(float(np.abs(d).max()) for d in diffs), 1e-3)  # one scale for both: ≈0 stays white
    rows = [(r.model_name, f"{r.attention_difference:.2e}", f"{r.output_difference:.2e}", what_breaks_it(r))
            for r in results]
    figures = [Figure(table(rows, ("model", "max |Δ| attention weights", "max |Δ| outputs", "")),
                      f"“{view.text}” run as typed and with its words shuffled ({' '.join(results[0].shuffled_tokens)}"
                      "), the shuffled run's rows put back; the largest differences over every layer, head, query "
                      "and key.", "shuffle")]
    maps = [heatmap_svg(d, r.tokens, r.tokens, title=f"{r.model_name}, L{layer} H{head}: weights − put-back weights",
                        kind="signed", limit=limit) for r, d in zip(results, diffs, strict=True)]
    return [*figures, Figure(side_by_side(*maps), f"Layer {layer}, head {head}: each model's weights minus its "
                             f"put-back weights, on one colour scale (±{limit:.2g}); white = no difference.", "shuffle")]


def find_head(step: Step, run: StepRun) -> list[Figure]:
    """Find the head's ranking for the step's pair: the pair's weight in every head, the best heads, and the best
    head's whole pattern with the pair ringed."""
    view = run.view
    res = view.run()
    labels = list(res.labels)
    first_query, first_key = default_pair(labels)
    query, key = token_at(step, "fh_query", labels, first_query), token_at(step, "fh_key", labels, first_key)
    ranked = rank_heads_for_pair(res, query, key)
    best = ranked[0]
    model, pair = view.model, f"{token_name(query, labels)} → {token_name(key, labels)}"
    grid = pair_weights(res.attentions, query, key).numpy()  # (L, H)
    top = [(r["rank"], r["layer"], r["head"], f"{r['weight']:.3f}", f"{r['× even spread']:.1f}")
           for r in ranking_rows(ranked, allowed_keys(res, query))[:5]]
    return [Figure(heatmap_svg(grid, [f"layer {i}" for i in range(model.n_layers)],
                               [f"head {h}" for h in range(model.n_heads)], title=pair, x_title="head",
                               y_title="layer", ring_cell=(best.layer, best.head)),
                   f"The weight {pair} in every head of {model.name}, {settings_said(run)}; the best ringed.",
                   "ranking"),
            Figure(table(top, ("rank", "layer", "head", "weight", "× even spread")),
                   f"The five best heads for {pair}.", "ranking"),
            Figure(heatmap_svg(res.attentions[best.layer, best.head].float().numpy(), labels, labels,
                               title=f"#1 · layer {best.layer}, head {best.head} · {best.weight:.2f}",
                               ring_cell=(query, key)),
                   f"The best head's whole pattern, the pair {pair} ringed.")]


def encoder_layer(step: Step, run: StepRun) -> list[Figure]:
    """The encoder layer page: token i (enc_token) through the layer's stages, and the residual stream across the
    layers."""
    view = run.view
    res = view.run(keep=True)
    labels = list(res.labels)
    i = token_at(step, "enc_token", labels, min(2, len(labels) - 1))
    steps = layer_steps(view.model, res, view.layer)
    stages = [(n, s.title, f"{float(s.value[i].norm()):.3f}", " ".join(f"{float(v):+.2f}" for v in s.value[i][:6]))
              for n, s in enumerate(steps.stages, start=1)]
    norms = stream_norms(view.model, res)
    layers = list(range(view.model.n_layers))
    chart = line_chart_svg(layers, {"‖x‖ entering": norms.x_in.numpy(), "‖attention's update‖":
                                    norms.attn_update.numpy(), "‖FFN's update‖": norms.ffn_update.numpy()},
                           x_title="layer", y_title="mean length over the tokens", label="The residual stream")
    return [Figure(table(stages, ("", "stage", "‖·‖", "its first 6 features")),
                   f"{view.model.name}, layer {view.layer} ({steps.order}), token {i} ({labels[i]}), "
                   f"{settings_said(run)}: its vector at each stage."),
            Figure(LINE_CSS + chart, "For every layer: how long the token vectors are as they enter it, and the "
                   "updates attention and the FFN add (mean over tokens).")]


@shared(max_entries=8)
def induction_probe(spec: str, device: str, half: int, seed: int, text: str):
    model = runs.model_for(spec, device)
    if text:
        ids, period, first = text_twice_ids(model, text)
    else:
        (ids, first), period = random_repeated_ids(model, half, seed), half
    return probe(model, ids, period, first), period


def induction(step: Step, run: StepRun) -> list[Figure]:
    """Induction heads: every head's induction score, and the best induction head on the repeated block (random words
    of ih_half, seed 0, unless the step asks for its text twice)."""
    state, view = settings(step), run.view
    spec = view.model_spec if writes_text(view.model) else TINY_LLAMA
    text = view.text if state.get("ih_source") == "your text, twice" else ""
    p, period = induction_probe(spec, view.device, int(state.get("ih_half", 20)), int(state.get("ih_seed", 0)), text)
    il, ih = p.best_induction
    n_layers, n_heads = p.induction.shape
    return [Figure(heatmap_svg(np.asarray(p.induction), [f"layer {i}" for i in range(n_layers)],
                               [f"head {h}" for h in range(n_heads)], title="induction score", x_title="head",
                               y_title="layer", ring_cell=(il, ih)),
                   "The mean weight each token of the second copy gives to the token that followed its first "
                   "occurrence (0 = never, 1 = always); the best ringed.", "induction_head"),
            Figure(heatmap_svg(p.attentions[il, ih].float().numpy(), list(p.labels), list(p.labels),
                               title=f"induction head: layer {il}, head {ih}"),
                   f"A block of {period} tokens, then the same block again: a perfect induction head puts each "
                   f"second-copy row's weight {period - 1} tokens left of the diagonal. This head's score is "
                   f"{float(p.induction[il, ih]):.3f}.", "induction_head")]


def additive(step: Step, run: StepRun) -> list[Figure]:
    """Additive against dot-product on the page's queries and keys (random N(0, 1) of add_n × add_d unless the step
    takes the model's), with the seeded additive weights (a fitted network takes the page's Adam steps: the page)."""
    state = settings(step)
    seed, d_a = int(state.get("add_seed", 0)), int(state.get("add_da", 16))
    mask = None
    if state.get("add_source", "random") == "model":
        view = run.view
        res = view.run(keep=True, scale=True)
        head = int(state.get("add_head", 0))
        q, k, v = sc.head_queries_keys(res, view.layer, head)
        labels, n = list(res.labels), q.shape[0]
        mask = None if res.mask is None else res.mask.reshape(n, n)
        where = f"{view.model.name}'s layer {view.layer} head {head} queries and keys {settings_said(run)}"
    else:
        n, d = int(state.get("add_n", 8)), int(state.get("add_d", 16))
        q, k, v = sc.random_qkv(n, d, seed)
        labels = [f"t{i}" for i in range(n)]
        where = f"random Q, K, V ({n} × {d}, N(0, 1), seed {seed})"
    both = sc.compare_scorings(q, k, v, sc.seeded_additive_weights(q.shape[1], k.shape[1], d_a, seed), mask)
    diff = both.difference
    return [Figure(side_by_side(heatmap_svg(both.dot_weights.numpy(), labels, labels,
                                            title="dot-product: weights after softmax"),
                                heatmap_svg(both.additive_weights.numpy(), labels, labels,
                                            title="additive (seeded W, U, v): weights after softmax")),
                   f"Scaled dot-product scoring (left) and additive scoring (right: a one-hidden-layer network, d_a = "
                   f"{d_a}, weights drawn from seed {seed}) of {where}: max |Δ| weight {float(diff.max()):.2e}, mean "
                   f"{float(diff.mean()):.2e}.")]


def efficient(step: Step, run: StepRun) -> list[Figure]:
    """Efficient attention's method (eff_method, else the first) on the model's layer-and-head Q, K, V, at the
    knobs' defaults for n: the exact weights beside the weights the method applies."""
    state, view = settings(step), run.view
    method = METHODS[state.get("eff_method", next(iter(METHODS)))]
    res = view.run(keep=True)
    head = int(state.get("eff_head", 0))
    trace = res.traces[view.layer]
    # (n, d_head) each, the first MAX_PATTERN_N tokens at most, as the page draws them
    q, k, v = (t[0, head, :MAX_PATTERN_N] for t in (trace.q, trace.k, trace.v))
    n, labels = q.shape[0], list(res.labels)[:MAX_PATTERN_N]
    raw = {kn.key: int(state.get(f"eff_{method.key}_{kn.key}", knob_default(kn, n))) for kn in method.knobs}
    raw |= {sw.key: state.get(f"eff_{sw.key}", sw.options[0]) for sw in method.switches}
    knobs, _ = cap_knobs(method, raw, n)
    cmp = compare(method, q, k, v, knobs, trace.scale)
    signed = method.signed(knobs)
    return [Figure(side_by_side(heatmap_svg(cmp.reference_weights.float().numpy(), labels, labels,
                                            title="exact attention: weights"),
                                heatmap_svg(cmp.method_weights.float().numpy(), labels, labels,
                                            title=f"{method.key}: weights it applies",
                                            kind="signed" if signed else "weights")),
                   f"{method.title} on {view.model.name}'s layer {view.layer}, head {head} (Q, K, V as the model "
                   f"computed them {settings_said(run)}): ‖out − exact‖ / ‖exact‖ = {cmp.output_error:.2e}, max |Δ "
                   f"weight| = {cmp.max_weight_delta:.2e}. What it trades: {method.trade}")]
