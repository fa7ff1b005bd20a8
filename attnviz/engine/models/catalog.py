"""The models a picker offers by a short name, and what each name loads.

One table for every picker (the sidebar and Compare's side B), so a name means the same model everywhere:
"tiny-llama" is attnviz's own trained Llama on every side, never a hub name. A spec is what `load_model`
gets; "toy-nopos" is the one spec that needs an option as well (the toy without positions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnviz.engine.models.loading import DEFAULT_MODEL, load_model
from attnviz.engine.models.model import Model
from attnviz.errors import AttnvizError


@dataclass(frozen=True)
class OfferedModel:
    name: str  # the picker's option and the URL's value
    spec: str  # what the page loads: load_model(spec) (or, for toy-nopos, the toy with positions=False)
    description: str
    load_options: dict = field(default_factory=dict)


OFFERED: dict[str, OfferedModel] = {m.name: m for m in (
    OfferedModel(DEFAULT_MODEL, "", "the bundled BERT model (6 layers × 12 heads), offline"),
    OfferedModel("toy", "toy", "a tiny seeded model (2 layers × 2 heads, d_model 8) whose numbers fit in cells"),
    OfferedModel("tiny-llama", "attnviz-tiny-llama",
                 "attnviz-tiny-llama: a 2-layer causal Llama (RoPE, grouped-query attention) that attnviz trained on "
                 "repeated words, offline"),
    OfferedModel("toy-nopos", "toy-nopos", "the same toy with its position embeddings removed: attention then sees "
                 "a set of words", {"positions": False}),
)}
FREE_FORM = "other"  # the picker's option for a hub name or a local folder, typed in
FREE_FORM_DESCRIPTION = "a Hugging Face hub name (needs the network) or a local model folder"


def spec_of(name: str, typed: str = "") -> str:
    """The spec a picker's choice stands for: an offered name's spec, or the typed name for FREE_FORM."""
    if name in OFFERED:
        return OFFERED[name].spec
    return typed.strip() if name == FREE_FORM else ""


def choice_of(spec: str) -> tuple[str, str]:
    """The picker's (choice, typed text) that shows this spec: the inverse of spec_of."""
    for offered in OFFERED.values():
        if offered.spec == spec:
            return offered.name, ""
    return FREE_FORM, spec


def load_spec(spec: str, device: str | None = None, max_bytes: int | None = None):
    """load_model for a spec a picker made (toy-nopos included); max_bytes: the server's size cap."""
    for offered in OFFERED.values():
        if offered.spec == spec and offered.load_options:
            return load_model("toy", device=device, **offered.load_options)
    model = load_model(spec or None, device=device, max_bytes=max_bytes)
    if not isinstance(model, Model):  # a shipped GRU encoder–decoder: it translates, and has no heads to draw
        raise AttnvizError(f"'{spec}' is one of attnviz's GRU encoder–decoders (the Why attention page): it has no "
                           "attention heads to show here. Pick a transformer.")
    return model
