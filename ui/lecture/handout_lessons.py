"""The handout's figures of the pages that run their own lesson (a picture, a trained number model, a measured
experiment), each for the step's state with the page's defaults where the step names none; computed by the same
lessons as the page. Each says which of the page's figures it is (its focus id), where the page names one."""

from __future__ import annotations

import html
import re

import numpy as np

from attnviz.draw.heatmap_svg import heatmap_svg
from attnviz.draw.line_chart import CSS as LINE_CSS
from attnviz.draw.line_chart import line_chart_svg
from attnviz.lecture.plan import Step
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import parse_grid, picture_regions
from attnviz.lessons.cross_attention.number_task import DEFAULT_SOURCE, greedy_output, written_labels
from attnviz.lessons.cross_attention.views import cross_layers, cross_view
from attnviz.lessons.encoder_layer.decoder_block import decoder_block_steps
from attnviz.lessons.masks.editor import mask_to_spec, starting_mask
from attnviz.lessons.masks.gallery import gallery_specs
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID
from attnviz.lessons.transformer_map.figure import map_svg
from attnviz.lessons.why_attention.bottleneck import alignment
from attnviz.lessons.why_attention.tiny_bart import TINY_BART
from ui import runs
from ui.lecture.handout_parts import Figure, settings, side_by_side, table
from ui.lecture.step_state import StepRun
from ui.memo import shared
from ui.parts.masks_cards import Runner


def masks(step: Step, run: StepRun) -> list[Figure]:
    """The Masks lab's focus card: the mask the gallery shows for it (with the step's sliders), on the step's text,
    at the page's layer and head, as the card runs it."""
    kind = step.focus.removesuffix("_card") if step.focus.endswith("_card") else "causal"
    state, view = settings(step), run.view
    sidebar = view.mask_choice if view.mask_choice.startswith("custom:") else None  # the editor's start, as the page's
    custom = mask_to_spec(starting_mask(sidebar, len(view.model.encode(view.text).labels))[0])
    specs = gallery_specs(window=int(state.get("masks_window", 2)), stride=int(state.get("masks_stride", 3)),
                          n_pad=int(state.get("masks_pad", 2)), keep=round(float(state.get("masks_keep", 0.3)), 2),
                          custom=custom)
    runner = Runner(run.view, int(state.get("masks_head", 0)))
    res = runner.run(specs[kind])
    tokens = list(res.labels)
    weights = runner.pattern(res.attentions).float().numpy()  # (n, n)
    where = f"layer {runner.layer}, head {runner.head} of {runner.model.name}"
    own = " (with the decoder's own causal mask)" if runner.model.cfg.causal else ""  # engine/mask_rule.py
    return [Figure(heatmap_svg(weights, tokens, tokens, title=f"{specs[kind]}: weights, {where}"),
                   f"The mask {specs[kind]}{own} applied in every layer: a forbidden key's score is −∞ before the softmax, "
                   f"so its weight is exactly 0. The weights of {where} on “{run.view.text}”.", step.focus)]


def transformer_map(step: Step, run: StepRun) -> list[Figure]:
    """The map without its links: in a file opened from a disk they would lead nowhere."""
    svg = re.sub(r"<a [^>]*>", "", map_svg()).replace("</a>", "")
    return [Figure(f'<div class="map">{svg}</div>', "The encoder–decoder Transformer: the orange blocks are "
                   "attention.", "transformer_map")]


@shared(max_entries=4)
def why_alignment(text: str):
    return alignment(text)


def why_attention(step: Step, run: StepRun) -> list[Figure]:
    text = settings(step).get("wa_text", "six hundred four million two hundred eighteen thousand three hundred "
                                         "seventy seven, seventy one thousand three, fifty eight")
    al = why_alignment(text)
    esc = html.escape
    answers = ('<table class="answers"><tr><th></th><th>digits</th></tr>'
               f"<tr><td>the right answer</td><td><code>{esc(al.expected or '—')}</code></td></tr>"
               f"<tr><td>one fixed-size vector wrote</td><td><code>{esc(al.bottleneck_answer or '(nothing)')}</code>"
               f"</td></tr><tr><td>additive attention wrote</td><td><code>{esc(al.attention_answer or '(nothing)')}"
               "</code></td></tr></table>")
    figures = [Figure(answers, f"Both models on “{text}”.", "try_it")]
    if al.output_labels:
        figures.append(Figure(heatmap_svg(al.weights.numpy(), list(al.output_labels), list(al.source_labels),
                                          title="The attention model's weights, one row per digit it wrote",
                                          x_title="source word", y_title="written"),
                              "Each row is one output step and sums to 1: while writing this digit, how much of each "
                              "source word's annotation it used.", "try_it"))
    return figures


def attention_layer(step: Step, run: StepRun) -> list[Figure]:
    """The page's step (al_step a to d) for its grid, query and strength."""
    state = settings(step)
    rows, cols = parse_grid(state.get("al_grid", "6x8"))
    regions = picture_regions(rows, cols)
    strength = float(state.get("al_strength", 10))
    grid = [f"r{i}" for i in range(rows)], [f"c{j}" for j in range(cols)]
    part = state.get("al_step", "a")
    if part == "a":
        query = state.get("al_query", "sun")
        weights = ly.one_query(regions.x, qs.feature_query(query, strength)).weights[0].numpy().reshape(rows, cols)
        return [Figure(heatmap_svg(weights, *grid, title=f"The query “{query}”: its weight on each region of the "
                                   "picture", x_title="column", y_title="row"),
                       f"One query (“{query}”, strength {strength:g}) over the {rows} × {cols} regions of the picture: "
                       f"the weights after the softmax, laid out as the picture is; they sum to 1. Largest: "
                       f"{weights.max():.2f}.", "picture")]
    names = list(qs.PRESETS)
    if part == "b":
        weights = ly.many_queries(regions.x, qs.all_feature_queries(strength)).weights.numpy()  # (M, N)
        return [Figure(heatmap_svg(weights, names, regions.labels, title=f"{len(names)} queries over the "
                                   f"{regions.n} regions", x_title="region", y_title="query"),
                       "One row of weights per query over the same regions: the scores are a matrix and the softmax "
                       "runs along each row.", "pictures")]
    if part == "c":
        kv = ly.keys_and_values(regions.x, qs.all_key_queries(strength))
        d_k = ly.W_K.shape[1]
        return [Figure(heatmap_svg(kv.weights.numpy(), names, regions.labels, title=f"A = softmax(Q Kᵀ/√{d_k}): "
                                   f"{len(names)} queries over the regions' keys", x_title="region", y_title="query"),
                       f"The queries now meet the regions' keys (X W_K, {d_k} numbers each), not the regions "
                       "themselves; each output is an average of the values X W_V, a colour. One row per query, "
                       "summing to 1.", "pictures")]
    check = ly.permutation_check(regions.x, ly.query_weights(strength), int(state.get("al_seed", 0)))
    weights = check.attended.weights.numpy()  # (N, N)
    return [Figure(heatmap_svg(weights, regions.labels, regions.labels, title=f"Self-attention weights A(X) "
                               f"({regions.n} × {regions.n})", x_title="region (key)", y_title="region (query)"),
                   f"Each region makes its own query (W_Q = {strength:g} × W_K without its brightness column) and "
                   f"weighs every region's key: {regions.n} vectors in, {regions.n} out. Shuffled, every output moves "
                   f"with its region: max |f(P X) − P f(X)| = {check.output_difference:.1e}.")]


@shared(max_entries=1)
def variances():
    return dot_product_variance_experiment(D_K_GRID)


def scaling(step: Step, run: StepRun) -> list[Figure]:
    v = variances()
    d_k = int(settings(step).get("scale_dk", 64))
    # each line has its own dash pattern (line_chart.DASHES): the theory's is told apart without colour too
    svg = line_chart_svg(list(D_K_GRID), {"Var(q·k) measured": v.unscaled_variance, "d_k (theory)":
                                          np.asarray(D_K_GRID, dtype=float),
                                          "Var(q·k / √d_k) measured": v.scaled_variance},
                         x_title="d_k", y_title="variance", log_axes=True, marker_x=d_k, marker_label=f"d_k = {d_k}",
                         label="The variance of q·k against d_k")
    i = list(D_K_GRID).index(d_k) if d_k in D_K_GRID else None
    said = ("The variance of q·k grows like d_k; divided by √d_k it stays near 1 (4000 random pairs per d_k)."
            + (f" At d_k = {d_k}: {v.unscaled_variance[i]:.0f} unscaled, {v.scaled_variance[i]:.2f} scaled."
               if i is not None else ""))
    return [Figure(LINE_CSS + svg, said, "dot_products")]


@shared(max_entries=4)
def tiny_bart_cross(source: str, device: str, layer: int):
    model = runs.model_for(TINY_BART, device)
    target = greedy_output(model, source).text
    return cross_view(model, source, target, layer)


def cross_attention(step: Step, run: StepRun) -> list[Figure]:
    """The page's focus head (xa_focus, else head 1) of its layer (xa_layer, else the last), tiny-bart's own answer
    for the step's source."""
    state = settings(step)
    source = state.get("xa_source") or DEFAULT_SOURCE
    n_layers, _ = cross_layers(runs.model_for(TINY_BART, run.view.device))
    layer, head = int(state.get("xa_layer", n_layers - 1)), int(state.get("xa_focus", 1))
    xv = tiny_bart_cross(source, run.view.device, layer)
    weights = xv.weights[head].float().numpy()  # (T, S)
    return [Figure(heatmap_svg(weights, written_labels(list(xv.target_labels)), list(xv.source_labels),
                               title=f"attnviz-tiny-bart, decoder layer {layer}, head {head}: cross-attention",
                               x_title="source word (key)", y_title="read→written (query)"),
                   f"The decoder's queries (each row reads a digit and writes the next, for “{source}”) over the "
                   "encoder's keys (the source words): each row sums to 1.", "focus_head")]


@shared(max_entries=4)
def decoder_steps(source: str, device: str, layer: int):
    model = runs.model_for(TINY_BART, device)
    return decoder_block_steps(model, source, " ".join(greedy_output(model, source).tokens), layer)


def decoder_block(step: Step, run: StepRun) -> list[Figure]:
    """The page's two attentions of one decoder layer and head (dec_layer, else the last; dec_head, else 1)."""
    state = settings(step)
    source = state.get("dec_source") or DEFAULT_SOURCE
    model = runs.model_for(TINY_BART, run.view.device)
    layer, head = int(state.get("dec_layer", model.n_decoder_layers - 1)), int(state.get("dec_head", 1))
    steps = decoder_steps(source, run.view.device, layer)
    rows = written_labels(list(steps.decoder_labels))
    where = f"decoder layer {layer}, head {head}"
    return [Figure(side_by_side(heatmap_svg(steps.self_weights[head].float().numpy(), rows,
                                            list(steps.decoder_labels), title=f"1. masked self-attention α, {where}",
                                            y_title="read→written"),
                                heatmap_svg(steps.cross_weights[head].float().numpy(), rows, list(steps.source_labels),
                                            title=f"2. cross-attention β, {where}", x_title="source token (key)",
                                            y_title="read→written")),
                   "Rows: the decoder's positions (the queries). Left: every cell above the diagonal is exactly 0, so "
                   "position t reads positions 0 … t only. Right: the keys and values come from the encoder's output "
                   f"for “{source}”, one column per source token; no mask, every row may read the whole source.",
                   "decoder_attention")]


def kv_cache(step: Step, run: StepRun) -> list[Figure]:
    m = run.model
    rows = [("layers", m.n_layers), ("query heads", m.n_heads), ("key/value heads", m.n_kv_heads),
            ("new queries per token, in each layer", m.n_heads), ("new keys (and values) per token, in each layer",
                                                                  m.n_kv_heads),
            ("numbers cached per token of context", 2 * m.n_layers * m.n_kv_heads * m.d_head)]
    return [Figure(table(rows), f"{m.name}: what one decoding step computes, and what its KV cache holds.",
                   "decode_step")]
