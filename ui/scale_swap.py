"""The scale swap: heatmaps that also carry their cells with the 1/√d_k switch flipped, so the browser can show
the other state the moment the switch flips, before the rerun's payload arrives (attnviz.draw.heatmap_switch)."""

from __future__ import annotations

from ui import runs
from ui.heatmap_widget import OtherState
from ui.pickers import SCALE_SWITCH

# Up to this many tokens a page may send its heatmaps with the switch flipped too. Longer, the second run and the
# doubled bytes (64 tokens: 98 kB more for 12 heads; 512: 6 MB) cost more than the round trip they hide, and the
# switch waits for the rerun as before.
SWAP_MAX_TOKENS = 64


def flipped_scale_state(view, n_tokens: int, layer: int) -> OtherState | None:
    """The run with the switch flipped (same text and mask) as far as this layer's attention weights, as an
    OtherState; None where the switch decides nothing (a factor of your own is set) or the text is too long.
    Only that far: a class's every new sentence pays for it, most of them on layer 0, where it costs a fraction
    of a whole run; the rerun after a flip runs the whole model as before."""
    if not isinstance(view.scale, bool) or n_tokens > SWAP_MAX_TOKENS:
        return None
    # after a flip, the state flipped back to is usually held whole already: no need for a partial run of it
    flipped = (runs.held_run(view.model_spec, view.device, view.text, view.mask_spec, not view.scale)
               or view.run(scale=not view.scale, layers=layer + 1, weights_only=True))
    return OtherState(SCALE_SWITCH, view.scale, flipped)
