"""A lecture step's own state, resolved from its plan's `state` as its page resolves its link (the model, text, mask
and scale; defaults where the step names none): what a question's right answer is computed for, on the projector,
the phones, the notes and the handout alike, never what a page's widgets hold at that moment (a lecturer may have
typed another sentence, and a page's layer and head pickers are drawn after the question)."""

from __future__ import annotations

from functools import cached_property

from attnviz.engine.mask_kinds import MASKS
from attnviz.lecture.kinds import Ask, Right, answer_kind
from attnviz.lecture.plan import Step
from ui import pickers, runs
from ui.access import server_settings
from ui.state import ViewState, applied_mask


def step_settings(step: Step) -> dict:
    """The step's URL state as the widgets would hold it (numbers as numbers, switches as booleans)."""
    state: dict = {}
    numbers = {p.name: type(p.default) for kind in MASKS.values() for p in kind.parameters}
    for key, value in step.state:
        if key == "heads":
            state.setdefault("heads", []).append(int(value))
        elif key == "layer":
            state[key] = int(value)
        elif key == "factor":
            state[key] = float(value)
        elif key == pickers.SCALE_SWITCH:
            state[key] = value == "true"
        elif numbers.get(key) in (int, float):
            state[key] = numbers[key](value)
        else:
            state[key] = value
    return state


class StepRun:
    """The step's model and run, made only when asked (a choice question asks neither)."""

    def __init__(self, step: Step):
        self.settings = step_settings(step)

    @property
    def model_spec(self) -> str:
        return pickers.read_model(self.settings)[1]

    @cached_property
    def view(self) -> ViewState:
        """The view the step's page opens with (no lesson model swap: a token question sits on a page of the shared
        model)."""
        state = self.settings
        choice, spec = pickers.read_model(state)
        device = pickers.read_device(state)
        model = runs.model_for(spec, device)
        text, mask_choice = pickers.read_text(state), pickers.read_mask(state)
        mask_spec, _, problem = applied_mask(spec, device, text, mask_choice, server_settings().max_tokens)
        layer, heads = pickers.read_layer_and_heads(state, model.n_layers, model.n_heads)
        return ViewState(choice, spec, text, mask_choice, mask_spec, pickers.read_scale(state), device, layer, heads,
                         None, (), problem)

    @property
    def model(self):
        return self.view.model

    def run(self):
        """The step's run (shared with the page's own, when its settings are the step's)."""
        return self.view.run()


def step_view(step: Step) -> ViewState:
    return StepRun(step).view


def right_answer(step: Step) -> Right:
    """The right answer to the step's question for the step's own state (AttnvizError when it cannot be computed:
    a query token the sentence lacks, a layer the model lacks)."""
    return answer_kind(step.answer).right(step.answer, StepRun(step))


def asked(step: Step, right: Right) -> Ask:
    """What a follower is asked for the step's question."""
    return answer_kind(step.answer).ask(step.answer, right)
