"""The two sides of a comparison: what each side is, the classic presets, and a sentence on what changed.

A side is a model, a text, a mask spec, a scale, and the layer and head to look at. Side B starts as
a copy of side A; a preset then changes exactly one thing, so whatever differs on screen is caused by
that one thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from attnviz.engine.mask_kinds import mask_kind, spec_from_values, values_from_spec
from attnviz.engine.models.catalog import choice_of, spec_of
from attnviz.errors import AttnvizError

PRESETS = {
    "scaled vs unscaled": "B flips the 1/√d_k scaling",
    "bidirectional vs causal": "B uses the causal mask (or none, if A is causal)",
    "full vs sliding window": "B uses a sliding window of 2 (or no mask, if A already does)",
}
PRESET_WINDOW = 2


@dataclass(frozen=True)
class SideConfig:
    model_spec: str  # what load_model gets: "" = bundled model, "toy", a hub name or a folder
    text: str
    mask_spec: str
    scale: bool | float  # True = 1/sqrt(d_k), False = 1, a float = that factor
    layer: int = 0
    head: int = 0


def apply_preset(preset: str, a: SideConfig) -> SideConfig:
    """Side B for a preset: a copy of A with the one setting the preset is about changed."""
    if preset == "scaled vs unscaled":
        return replace(a, scale=a.scale is not True)  # True = the trained 1/√d_k; anything else flips back to it
    if preset == "bidirectional vs causal":
        return replace(a, mask_spec="none" if a.mask_spec == "causal" else "causal")
    if preset == "full vs sliding window":
        window = f"window:{PRESET_WINDOW}"
        return replace(a, mask_spec="none" if a.mask_spec == window else window)
    raise AttnvizError(f"Unknown comparison preset '{preset}'. Choose one of: {', '.join(PRESETS)}.")


# ---- a side <-> the values of its widgets (the same names as the shared sidebar's) -----------------


def widget_values(side: SideConfig) -> dict[str, object]:
    """The widget values that show this side: model, model_path, text, mask + every mask parameter, scale,
    layer, head (the picker names of ui.pickers, the mask's from the engine's registry of mask kinds)."""
    choice, typed = choice_of(side.model_spec)
    values: dict[str, object] = {"model": choice, "model_path": typed, **values_from_spec(side.mask_spec or "none")}
    if isinstance(side.scale, bool):
        values.update(scaled=side.scale, factor=0.0)
    else:
        values.update(scaled=True, factor=float(side.scale))
    values.update(text=side.text, layer=int(side.layer), head=int(side.head))
    return values


def side_from_values(values: dict) -> SideConfig:
    """The side that a set of widget values shows (the inverse of `widget_values`); None values = defaults."""
    values = {name: value for name, value in values.items() if value is not None}
    spec = spec_of(str(values.get("model", "")), str(values.get("model_path", "")))
    return SideConfig(spec, str(values.get("text", "")), spec_from_values(values), scale_from_values(values),
                      int(values.get("layer", 0)), int(values.get("head", 0)))


def same_settings(a: SideConfig | None, b: SideConfig | None) -> bool:
    """Equal in model, text, mask and scale (layer and head aside): B still is what a preset made of A."""
    if a is None or b is None:
        return False
    return (a.model_spec, a.text, a.mask_spec, a.scale, type(a.scale)) == (
        b.model_spec, b.text, b.mask_spec, b.scale, type(b.scale))


def scale_from_values(values: dict) -> bool | float:
    factor = float(values.get("factor") or 0.0)
    return factor if factor > 0 else bool(values.get("scaled", True))


# ---- the one sentence ------------------------------------------------------------------------------


def describe_scale_setting(scale) -> str:
    if scale is True:
        return "scores divided by √d_k"
    if scale is False:
        return "no scaling"
    return f"scores × {float(scale):g}"


def describe_mask_setting(spec: str) -> str:
    """'a sliding window of 2', 'the causal mask and a sliding window of 2': as the registry of kinds words each."""
    words = []
    for part in (spec or "none").split("&"):
        name = part.strip().partition(":")[0]
        try:
            words.append(mask_kind(name).setting_words(part.strip()))
        except AttnvizError:
            words.append(f"the {name} mask")
    return " and ".join(words)


def setting_changes(a: SideConfig, b: SideConfig) -> list[str]:
    """'the mask (no mask → causal)', ...: each setting in which B differs from A."""
    changes = []
    if a.model_spec != b.model_spec:
        changes.append(f"the model ({a.model_spec or 'bundled'} → {b.model_spec or 'bundled'})")
    if a.text != b.text:
        changes.append("the text")
    if a.mask_spec != b.mask_spec:
        changes.append(f"the mask ({describe_mask_setting(a.mask_spec)} → {describe_mask_setting(b.mask_spec)})")
    if a.scale != b.scale or type(a.scale) is not type(b.scale):
        changes.append(f"the scaling ({describe_scale_setting(a.scale)} → {describe_scale_setting(b.scale)})")
    if a.layer != b.layer:
        changes.append(f"the layer ({a.layer} → {b.layer})")
    if a.head != b.head:
        changes.append(f"the head ({a.head} → {b.head})")
    return changes


def describe_change(a: SideConfig, b: SideConfig, entropy_change: float, max_weight_change: float,
                    mean_kl: float | None = None) -> str:
    """One plain sentence: what B changes, and what that did to the head (numbers are B relative to A)."""
    changes = setting_changes(a, b)
    if not changes:
        return "A and B are the same configuration, so every difference below is zero."
    what = _join(changes)
    d_entropy, d_peak = -entropy_change, -max_weight_change  # the change *from A to B*
    if math.isclose(d_entropy, 0.0, abs_tol=5e-4) and math.isclose(d_peak, 0.0, abs_tol=5e-4):
        effect = "which left this head's entropy and peak weight unchanged"
    else:
        spread = "more evenly" if d_entropy > 0 else "less evenly"
        peak = "higher" if d_peak > 0 else "lower"
        effect = (f"so B's rows spread their weight {spread} (entropy {d_entropy:+.2f} nats) "
                  f"and peak {peak} (max weight {d_peak:+.2f})")
    if mean_kl is None:
        kl = ""
    elif math.isinf(mean_kl):
        kl = (", and the mean KL(A‖B) per row is infinite: for some query B gives zero weight to a key that A "
              "attends to")
    else:
        kl = f", {mean_kl:.3f} nats of KL per row on average"
    return f"B differs from A only in {what}, {effect}{kl}."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
