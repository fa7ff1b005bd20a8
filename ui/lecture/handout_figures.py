"""Each lecture step's figures for the handout, static (an SVG or a table: they print as they show), computed by the
same lessons as the step's page, for the step's own state. One maker per page that a plan may name; a page with no
maker (its figures are the interactive kind: head claims, efficient attention, ...) gets none, and the handout says
so under the step's explanation."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnviz.draw.heatmap_svg import heatmap_svg
from attnviz.draw.line_chart import CSS as LINE_CSS
from attnviz.draw.line_chart import line_chart_svg
from attnviz.engine.mask_kinds import parse_mask
from attnviz.lecture.kinds.base import bare
from attnviz.lecture.plan import Step
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import picture_regions
from attnviz.lessons.cross_attention.number_task import DEFAULT_SOURCE, greedy_output
from attnviz.lessons.cross_attention.views import cross_view
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID
from attnviz.lessons.transformer_map.figure import map_svg
from attnviz.lessons.why_attention.bottleneck import alignment
from attnviz.lessons.why_attention.tiny_bart import TINY_BART
from ui import runs
from ui.lecture.step_state import StepRun
from ui.memo import shared


@dataclass(frozen=True)
class Figure:
    html: str  # an SVG or a table, escaped
    caption: str  # what it shows, in words (plain text)


def settings(step: Step) -> dict[str, str]:
    """The step's state, one value per key (the first of a repeated one)."""
    found: dict[str, str] = {}
    for key, value in step.state:
        found.setdefault(key, value)
    return found


def head_of(step: Step) -> tuple[int, tuple[int, ...], str | None]:
    """(layer, heads, the query to ring) a step's figure shows: its token question's row, else the layer and head
    its state names (the explorer's layer, a page's own head picker), else layer 0, head 0."""
    heads = getattr(step.answer, "heads", None)  # an answer that names a row of the model (a token question)
    if heads:
        return step.answer.layer, heads, step.answer.query
    state = settings(step)
    layer = int(state.get("layer", 0))
    head = next((int(v) for k, v in step.state if k.endswith("_head") or k == "heads"), 0)
    return layer, (head,), None


def shared_run(step: Step, run: StepRun) -> list[Figure]:
    """The shared model's attention for the step's state: the question's head (its query's row ringed), else the
    head the state names."""
    res = run.run()
    layer, heads, query = head_of(step)
    n_layers, n_heads = res.attentions.shape[:2]
    layer, heads = min(layer, n_layers - 1), tuple(h for h in heads if h < n_heads) or (0,)
    weights = res.attentions[layer, list(heads)].float().mean(dim=0).numpy()  # (n_q, n_k)
    tokens = list(res.tokens)
    ring = next((i for i, t in enumerate(tokens) if bare(t) == bare(query)), None) if query else None
    which = f"layer {layer}, head {heads[0]}" if len(heads) == 1 else f"layer {layer}, the mean of heads " + \
        ", ".join(map(str, heads))
    title = f"{run.model.name}: {which}"
    # a decoder applies its own causal mask whatever the spec adds (attnviz/engine/mask_rule.py): say the one applied
    mask = run.view.mask_spec if not run.model.cfg.causal else \
        "causal, the model's own" + ("" if run.view.mask_spec in ("none", "causal") else f", and {run.view.mask_spec}")
    said = (f"{run.model.name}'s attention weights after softmax, {which}, on “{run.view.text}” (mask "
            f"{mask}, {'scaled by 1/√d_k' if run.view.scale is True else 'scale ' + str(run.view.scale)})"
            ". Rows are queries, columns keys; each row sums to 1."
            + (f" The row of “{tokens[ring]}” is ringed." if ring is not None else ""))
    return [Figure(heatmap_svg(weights, tokens, tokens, title=title, ring_row=ring), said)]


def masks(step: Step, run: StepRun) -> list[Figure]:
    """The Masks lab's focus card: the shared model's first head under that mask."""
    kind = step.focus.removesuffix("_card") if step.focus.endswith("_card") else "causal"
    res = run.model.run(run.view.text, mask=parse_mask(kind, len(run.model.encode(run.view.text).tokens)))
    tokens = list(res.tokens)
    weights = res.attentions[0, 0].float().numpy()  # (n, n)
    return [Figure(heatmap_svg(weights, tokens, tokens, title=f"{run.model.name}: layer 0, head 0, {kind} mask"),
                   f"Under the {kind} mask a forbidden key's score is −∞ before the softmax, so its weight is "
                   f"exactly 0; the first row here is {weights[0, 0]:.2f} on itself. Layer 0, head 0 of "
                   f"{run.model.name} on “{run.view.text}”.")]


def transformer_map(step: Step, run: StepRun) -> list[Figure]:
    """The map without its links: in a file opened from a disk they would lead nowhere."""
    svg = re.sub(r"<a [^>]*>", "", map_svg()).replace("</a>", "")
    return [Figure(f'<div class="map">{svg}</div>', "The encoder–decoder Transformer: the orange blocks are "
                   "attention.")]


@shared(max_entries=4)
def why_alignment(text: str):
    return alignment(text)


def why_attention(step: Step, run: StepRun) -> list[Figure]:
    text = settings(step).get("wa_text", "six hundred four million two hundred eighteen thousand three hundred "
                                         "seventy seven, seventy one thousand three, fifty eight")
    al = why_alignment(text)
    esc = html.escape
    table = ('<table class="answers"><tr><th></th><th>digits</th></tr>'
             f"<tr><td>the right answer</td><td><code>{esc(al.expected or '—')}</code></td></tr>"
             f"<tr><td>one fixed-size vector wrote</td><td><code>{esc(al.bottleneck_answer or '(nothing)')}</code></td>"
             f"</tr><tr><td>additive attention wrote</td><td><code>{esc(al.attention_answer or '(nothing)')}</code></td>"
             "</tr></table>")
    figures = [Figure(table, f"Both models on “{text}”.")]
    if al.output_labels:
        figures.append(Figure(heatmap_svg(al.weights.numpy(), list(al.output_labels), list(al.source_labels),
                                          title="The attention model's weights, one row per digit it wrote",
                                          x_title="source word", y_title="written"),
                              "Each row is one output step and sums to 1: while writing this digit, how much of each "
                              "source word's annotation it used."))
    return figures


def attention_layer(step: Step, run: StepRun) -> list[Figure]:
    state = settings(step)
    regions = picture_regions(6, 8)
    if state.get("al_step", "a") == "a":
        query = state.get("al_query", "sun")
        weights = ly.one_query(regions.x, qs.feature_query(query, 10.0)).weights[0].numpy().reshape(6, 8)  # (6, 8)
        return [Figure(heatmap_svg(weights, [f"r{i}" for i in range(6)], [f"c{j}" for j in range(8)],
                                   title=f"The query “{query}”: its weight on each region of the picture",
                                   x_title="column", y_title="row"),
                       f"One query (“{query}”, strength 10) over the 6 × 8 regions of the picture: the weights after "
                       f"the softmax, laid out as the picture is; they sum to 1. Largest: {weights.max():.2f}.")]
    names = list(qs.PRESETS)
    weights = ly.many_queries(regions.x, qs.all_feature_queries(10.0)).weights.numpy()  # (M, 48)
    return [Figure(heatmap_svg(weights, names, regions.labels, title="Five queries over the 48 regions",
                               x_title="region", y_title="query"),
                   "One row of weights per query over the same regions: the scores are a matrix and the softmax "
                   "runs along each row.")]


@shared(max_entries=1)
def variances():
    return dot_product_variance_experiment(D_K_GRID)


def scaling(step: Step, run: StepRun) -> list[Figure]:
    v = variances()
    d_k = int(settings(step).get("scale_dk", 64))
    svg = line_chart_svg(list(D_K_GRID), {"Var(q·k) measured": v.unscaled_variance, "d_k (theory)":
                                          np.asarray(D_K_GRID, dtype=float),
                                          "Var(q·k / √d_k) measured": v.scaled_variance},
                         x_title="d_k", y_title="variance", log_axes=True, marker_x=d_k,
                         label="The variance of q·k against d_k")
    i = list(D_K_GRID).index(d_k) if d_k in D_K_GRID else None
    said = ("The variance of q·k grows like d_k; divided by √d_k it stays near 1 (4000 random pairs per d_k)."
            + (f" At d_k = {d_k}: {v.unscaled_variance[i]:.0f} unscaled, {v.scaled_variance[i]:.2f} scaled."
               if i is not None else ""))
    return [Figure(LINE_CSS + svg, said)]


@shared(max_entries=4)
def tiny_bart_cross(source: str, device: str):
    model = runs.model_for(TINY_BART, device)
    target = greedy_output(model, source).text
    return cross_view(model, source, target, 1)


def cross_attention(step: Step, run: StepRun) -> list[Figure]:
    state = settings(step)
    source = state.get("dec_source") or state.get("xa_source") or DEFAULT_SOURCE
    xv = tiny_bart_cross(source, run.view.device)
    weights = xv.weights[1].float().numpy()  # (T, S) decoder layer 1, head 1
    return [Figure(heatmap_svg(weights, list(xv.target_labels), list(xv.source_labels),
                               title="attnviz-tiny-bart, decoder layer 1, head 1: cross-attention",
                               x_title="source word (key)", y_title="target (query)"),
                   f"The decoder's queries (the digits it writes for “{source}”, shifted one place right) over the "
                   "encoder's keys (the source words): each row sums to 1.")]


def kv_cache(step: Step, run: StepRun) -> list[Figure]:
    m = run.model
    rows = [("layers", m.n_layers), ("query heads", m.n_heads), ("key/value heads", m.n_kv_heads),
            ("new queries per token, in each layer", m.n_heads), ("new keys (and values) per token, in each layer",
                                                                  m.n_kv_heads),
            ("numbers cached per token of context", 2 * m.n_layers * m.n_kv_heads * m.d_head)]
    table = '<table class="answers">' + "".join(f"<tr><td>{html.escape(a)}</td><td>{b}</td></tr>" for a, b in rows) \
        + "</table>"
    return [Figure(table, f"{m.name}: what one decoding step computes, and what its KV cache holds.")]


MAKERS: dict[str, Callable[[Step, StepRun], list[Figure]]] = {
    "": shared_run, "step_by_step": shared_run, "multihead_anatomy": shared_run, "qk_space": shared_run,
    "find_head": shared_run, "encoder_layer": shared_run, "positions": shared_run, "model_view": shared_run,
    "masks_lab": masks, "transformer_map": transformer_map, "why_attention": why_attention,
    "attention_layer": attention_layer, "scaling_lab": scaling, "cross_attention": cross_attention,
    "decoder_block": cross_attention, "kv_cache": kv_cache,
}


def step_figures(step: Step) -> list[Figure]:
    """The step's figures for the handout ([] for a page with no maker)."""
    maker = MAKERS.get(step.page)
    return maker(step, StepRun(step)) if maker else []
