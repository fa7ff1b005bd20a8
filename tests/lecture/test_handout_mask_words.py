"""The handout's captions say the mask a run applied: a decoder's own causal mask even where the step's state says
"none" (attnviz/engine/mask_rule.py). A walk of the default plan found step 8's tiny-llama heatmap, plainly causal,
captioned "mask none"."""

from apptest_helpers import app_menu

from attnviz.lecture import load_plan
from attnviz.paths import LECTURES
from ui.lecture.handout_figures import step_figures

PLAN = load_plan(LECTURES / "attention.toml", {p: t for _, p, t in app_menu()})


def caption(number: int) -> str:
    figures = step_figures(PLAN.step(number))
    assert len(figures) == 1
    return figures[0].caption


def test_a_decoders_heatmap_is_captioned_with_its_own_causal_mask():
    step = PLAN.step(8)
    assert dict(step.state).get("model") == "tiny-llama"  # the step this is about: a decoder's heads
    assert "(mask causal, the model's own," in caption(8)


def test_an_encoders_heatmap_keeps_the_mask_its_state_names():
    assert "(mask none," in caption(5)  # MiniLM, an encoder: nothing masked
