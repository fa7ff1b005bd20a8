"""The figures a shipped plan quotes in its explanations are attnviz's, for the state the step opens: each is
recomputed here with the library (the same lessons as the page) and must appear in the step's explain as written.
The Head claims figures (300 sentences, knock-outs of every pair) are left to tests/app/test_page_head_claims.py."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import math
import re

import pytest
import torch
from apptest_helpers import app_menu

import attnviz
from attnviz.lecture import load_plan
from attnviz.lecture.kinds.quantities import dot_variance
from attnviz.lessons.attention_layer import layer as ly
from attnviz.lessons.attention_layer import queries as qs
from attnviz.lessons.attention_layer.regions import picture_regions
from attnviz.lessons.cross_attention.number_task import greedy_output
from attnviz.lessons.cross_attention.views import cross_view
from attnviz.lessons.positions.permutation import permutation_demo
from attnviz.lessons.why_attention.bottleneck import alignment
from attnviz.paths import LECTURES

PAGES = {path: title for _, path, title in app_menu()}
IT_ANIMAL = "The animal didn't cross the street because it was too tired."


def step(plan_id: str, title_start: str):
    plan = load_plan(LECTURES / f"{plan_id}.toml", PAGES)
    return next(s for s in plan.steps if s.title.startswith(title_start))


def state(s) -> dict:
    return dict(s.state)


def why_attention(s) -> list[str]:
    al = alignment(state(s)["wa_text"])
    assert al.attention_answer == al.expected != al.bottleneck_answer
    return [al.attention_answer, al.bottleneck_answer]


def one_query(s) -> list[str]:
    w = ly.one_query(picture_regions(6, 8).x, qs.feature_query(state(s).get("al_query", "sun"), 10.0)).weights[0]  # (48,)
    first, second = torch.topk(w, 2).indices.tolist()
    ordinal = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
    where = "just above it" if second == first - 8 else "elsewhere"  # the text's "just above it" is checked too
    return [f"{ordinal[first // 8]} row from the top and {ordinal[first % 8]} from the left (r{first // 8}c{first % 8}",
            f"gets weight {w[first]:.2f}", f"r{second // 8}c{second % 8} {where}, gets {w[second]:.2f}"]


def it_animal(s) -> list[str]:
    a = attnviz.load_model().run(state(s)["text"]).attentions  # (6, 12, 16, 16)
    row = a[3, 1, 10]
    others = torch.cat([a[3, :1, 10, 2], a[3, 2:, 10, 2]])
    return [f'"animal" {row[2]:.2f}', f"[CLS] {row[0]:.2f}", f'"it" {row[10]:.2f}', f"at most {others.max():.2f}"]


def variance(s) -> list[str]:
    """The right answer is the theory's d_k, and the explanation says so first; the lab's measurement is a sample's
    estimate, said as one (the walk found "The right answer: 488.7" above an explanation that said 512)."""
    d_k = int(state(s)["scale_dk"])
    assert (s.answer.expected, s.answer.quantity) == (d_k, ""), "the right answer is d_k itself, marked in the plan"
    measured = dot_variance(d_k)
    return [f"{d_k}, the theory's value", f"random pairs: {measured:.0f} (measured here)", f"a sample's estimate of {d_k}",
            f"about ±{math.sqrt(measured):.0f}"]


def largest_shuffle_change(text: str) -> tuple[float, int, int]:
    """The toy's largest |Δ| weight after the shuffle, over every layer and head, and the (layer, head) holding it."""
    res = permutation_demo(attnviz.load_model("toy"), text)
    per_head = (res.attentions - res.attentions_back).abs().amax(dim=(-1, -2))  # (L, H)
    layer, head = divmod(int(per_head.argmax()), per_head.shape[1])
    return float(per_head.max()), layer, head


def shuffle(s) -> list[str]:
    plain = permutation_demo(attnviz.load_model("toy-nopos"), state(s)["text"]).attention_difference
    placed, layer, head = largest_shuffle_change(state(s)["text"])
    # the step opens on the map that holds the largest change, so the figure quoted is the one on screen
    assert (int(state(s)["pos_layer"]), int(state(s)["pos_head"])) == (layer, head)
    return [f"float rounding, {plain:.0e}", f"by up to {placed:.2f} over its 2 layers and 2 heads (in layer {layer}, "
            f"head {head}, the map shown)"]


def cross(s) -> list[str]:
    model = attnviz.load_model("tiny-bart")
    source = "three thousand four hundred twelve"
    xv = cross_view(model, source, greedy_output(model, source).text, 1)
    w = xv.weights[1]  # (T, S) rows: the position that writes digit d reads the one before it (shifted right)
    writes = {xv.target_labels[i + 1] if i + 1 < len(xv.target_labels) else "end": w[i] for i in range(len(w))}
    said = {d: (xv.source_labels[int(r.argmax())], float(r.max())) for d, r in writes.items()}
    assert [said[d][0] for d in "3412"] == ["three", "four", "twelve", "twelve"]
    return [f'gives "four" {said["4"][1]:.2f}', f'"three" ({said["3"][1]:.2f})',
            f'({said["1"][1]:.2f} and {said["2"][1]:.2f})']


def new_keys(s) -> list[str]:
    m = attnviz.load_model("tiny-llama")
    return [f"tiny-llama has {m.n_kv_heads}", f"computes {m.n_heads} queries", f"only {m.n_kv_heads} keys"]


def unscaled(s) -> list[str]:
    m = attnviz.load_model()
    a, b = m.run(IT_ANIMAL).attentions, m.run(IT_ANIMAL, scale=False).attentions

    def entropy(x):
        return float((-(x * x.clamp_min(1e-30).log()).sum(-1)).mean())

    return [f"from {entropy(a[3]):.2f} to {entropy(b[3]):.2f} nats",
            f"averages {b.max(-1).values.mean():.2f} instead of {a.max(-1).values.mean():.2f}"]


def find_head(s) -> list[str]:
    a = attnviz.load_model().run(IT_ANIMAL).attentions
    pair = a[:, :, 10, 2]  # (layers, heads): 'it' -> 'animal'
    many = int((a[5, 11, :, 2] >= 0.5).sum())
    words = {6: "six"}
    return [f"Layer 3, head 1 ({pair[3, 1]:.2f})", f"layer 5, head 11 ({pair[5, 11]:.2f})",
            f"more than {pair[:3].max():.2f}", f"{words.get(many, many)} of the 16 queries"]


def it_animal_notes(s) -> list[str]:
    m = attnviz.load_model()
    a = m.run(state(s)["text"]).attentions  # (6, 12, 16, 16)
    others = torch.cat([a[3, :1, 10, 2], a[3, 2:, 10, 2]])
    wide = m.run(state(s)["text"].replace("tired", "wide")).attentions[3, 1, 10]
    return [f'gives {a[3, 1, 10, 2]:.2f} of its weight to "animal"', f"at most {others.max():.2f}",
            f'this head then gives [CLS] {wide[0]:.2f} and "animal" {wide[2]:.2f}']


def shuffle_notes(s) -> list[str]:
    placed, layer, head = largest_shuffle_change(state(s)["text"])
    return [f"by up to {placed:.2f} over the toy's 2 layers and 2 heads, in layer {layer}, head {head}"]


def unscaled_notes(s) -> list[str]:
    d_head = attnviz.load_model().d_head
    return [f"√d_k ≈ {math.sqrt(d_head):.1f} times larger (d_head = {d_head})"]


def find_head_notes(s) -> list[str]:
    a = attnviz.load_model().run(IT_ANIMAL).attentions
    many = int((a[5, 11, :, 2] >= 0.5).sum())
    return [f'{ {6: "six"}.get(many, many)} of the {a.shape[-1]} queries give "animal" 0.5 or more']


NOTES = [("attention", "Self-attention in a real model", it_animal_notes), ("attention", "Positions", shuffle_notes),
         ("extended", "The same sentence without", unscaled_notes), ("extended", "Find the head", find_head_notes)]


@pytest.mark.parametrize("plan_id, title, figures", NOTES, ids=[f"{p}-{t}" for p, t, _ in NOTES])
def test_a_figure_quoted_in_the_notes_is_attnvizs(plan_id, title, figures):
    """The presenter notes quote figures too (what the lecturer says aloud): recomputed the same way."""
    s = step(plan_id, title)
    notes = " ".join(s.notes.split())
    for figure in figures(s):
        assert figure in notes, f"{title}: {figure!r} not in {notes!r}"


# a sentence that says numbers are printed in a heatmap's cells: whether they are depends on the screen (a projector's
# 20 px type needs cells a 1024 × 768 screen cannot give the step-by-step chain), so it names the screens it means,
# and tests/browser/test_browser_projector.py checks each. "every number fits inside its cell" on step 7 was false on
# the projector, which showed none.
NUMBERS_IN_CELLS = re.compile(r"\bnumbers?\b[^.]*\bcells?\b|\bcells?\b[^.]*\bnumbers?\b", re.IGNORECASE)


@pytest.mark.parametrize("plan_id", ["attention", "extended", "heads_under_test"])
def test_a_sentence_about_numbers_in_cells_names_the_screens_it_means(plan_id):
    plan = load_plan(LECTURES / f"{plan_id}.toml", PAGES)
    for k, s in enumerate(plan.steps, start=1):
        for field in ("notes", "explain"):
            for sentence in re.split(r"(?<=[.])\s", " ".join((getattr(s, field) or "").split())):
                if NUMBERS_IN_CELLS.search(sentence):
                    assert "projector" in sentence and re.search(r"phone|laptop", sentence), \
                        f"{plan_id} step {k} {field}: {sentence!r} says numbers are in the cells without saying on " \
                        "which screens (a projector prints fewer)"


CHECKS = [("attention", "Why attention?", why_attention), ("attention", "Attention as a layer: one query", one_query),
          ("attention", "Self-attention in a real model", it_animal), ("attention", "Why divide", variance),
          ("attention", "Positions", shuffle), ("attention", "Cross-attention", cross),
          ("attention", "Generating token by token", new_keys), ("extended", "The same sentence without", unscaled),
          ("extended", "Find the head", find_head)]


@pytest.mark.parametrize("plan_id, title, figures", CHECKS, ids=[f"{p}-{t}" for p, t, _ in CHECKS])
def test_a_quoted_figure_is_attnvizs(plan_id, title, figures):
    s = step(plan_id, title)
    explain = " ".join(s.explain.split())
    for figure in figures(s):
        assert figure in explain, f"{title}: {figure!r} not in {explain!r}"


def test_layer_5_head_11_is_quoted_the_same_in_both_plans():
    extended, under_test = step("extended", "Find the head"), step("heads_under_test", "Find the head")
    for figure in find_head(extended)[-1:]:
        assert figure in " ".join(under_test.explain.split())
    assert f"gives 'animal' {find_head(extended)[1].split('(')[1][:4]}" in under_test.question
