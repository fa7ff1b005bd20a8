"""Each lecture step's figures for the handout, static (an SVG or a table: they print as they show), computed by the
same lessons as the step's page, for the step's own state: one maker per page a plan may name, each drawing the page's
own figure (the one a step's focus names, where the page names its figures). The makers live beside this registry:
handout_model_figures.py (pages that run a model on the step's sentence), handout_lessons.py (pages with their own
lesson: a picture, a number model, an experiment), handout_claims.py (Head claims). A page with no maker (Compare,
the lecture's own pages) gets a sentence in the handout saying so (attnviz/lecture/record.py)."""

from __future__ import annotations

from collections.abc import Callable

from attnviz.lecture.plan import Step
from ui.lecture import handout_claims as claims
from ui.lecture import handout_lessons as lessons
from ui.lecture import handout_model_figures as models
from ui.lecture.handout_parts import Figure, head_of  # noqa: F401 - the handout's callers import them from here
from ui.lecture.step_state import StepRun

shared_run = models.shared_run

MAKERS: dict[str, Callable[[Step, StepRun], list[Figure]]] = {
    "": shared_run, "model_view": shared_run, "step_by_step": models.chain, "multihead_anatomy": models.heads_shared,
    "qk_space": models.qk_plane, "find_head": models.find_head, "encoder_layer": models.encoder_layer,
    "positions": models.shuffle, "induction_heads": models.induction, "additive_attention": models.additive,
    "efficient_attention": models.efficient,
    "masks_lab": lessons.masks, "transformer_map": lessons.transformer_map, "why_attention": lessons.why_attention,
    "attention_layer": lessons.attention_layer, "scaling_lab": lessons.scaling,
    "cross_attention": lessons.cross_attention, "decoder_block": lessons.decoder_block, "kv_cache": lessons.kv_cache,
    "head_claims": claims.head_claims,
}
# the pages whose step runs the shared model on its sentence: the handout's viewer has an entry for each
RUNS_THE_SENTENCE = frozenset({"", "model_view", "step_by_step", "multihead_anatomy", "qk_space", "find_head",
                               "encoder_layer", "positions"})


def step_figures(step: Step) -> list[Figure]:
    """The step's figures for the handout: its page's own for the step's state ([] for a page with no maker: the
    handout says so in their place)."""
    maker = MAKERS.get(step.page)
    return maker(step, StepRun(step)) if maker else []
