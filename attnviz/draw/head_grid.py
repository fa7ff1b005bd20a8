"""The heads of one layer as one heatmap payload: the app's explorer grid, a notebook's widget and a saved HTML file.

Each head is a panel titled with two numbers a class reads off it: its mean row entropy H (nats; low = each query
looks at few keys) and its mean largest weight per row ("max"; near 1 = saturated).
"""

from __future__ import annotations

import torch

from attnviz.analysis.stats import head_entropy, head_max_weight
from attnviz.draw.heatmap_payload import heatmap_payload


def head_titles(weights, heads) -> list[str]:
    """'head 3 · H 1.20 · max 0.61' for each head of `heads`; weights (n_heads, n_q, n_k) are the layer's."""
    w = torch.as_tensor(weights)
    entropy, peak = head_entropy(w), head_max_weight(w)
    return [f"head {h} · H {entropy[h]:.2f} · max {peak[h]:.2f}" for h in heads]


def head_grid_payload(weights, row_labels: list[str], heads, *, layer: int, name: str,
                      col_labels: list[str] | None = None, per_head_scale: bool = False, selection: dict | None = None,
                      columns: int = 3, x_title: str = "key (attended to)", y_title: str = "query (attending)",
                      attention: str = "", selectable: bool = True, caption: str = "") -> bytes:
    """Every head of `heads` of layer `layer`, weights (n_heads, n_q, n_k), as one heatmap payload, selectable unless
    told (a view drawn for a lecture's followers takes no click); a screen reader hears each cell with its "layer L,
    head H". col_labels None: the row labels (self-attention); a cross-attention passes its source tokens (attention:
    its name, e.g. "cross-attention", in the grid's name: the cells' own stay short)."""
    heads = list(heads)
    what = f"{attention}, " if attention else ""
    return heatmap_payload(weights[heads], row_labels, col_labels, titles=head_titles(weights, heads),
                           columns=columns, per_head_scale=per_head_scale, selectable=selectable, selection=selection,
                           name=name, x_title=x_title, y_title=y_title, caption=caption,
                           panel_names=[f"layer {layer}, head {h}" for h in heads],
                           label=f"{what}layer {layer}: {len(heads)} head{'s' if len(heads) != 1 else ''}, weights after "
                                 "softmax")
