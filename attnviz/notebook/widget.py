"""attnviz.show: the heatmaps as a Jupyter widget (anywidget), drawn by the app's own heatmap JavaScript."""

from __future__ import annotations

import anywidget
import traitlets

from attnviz.components.heatmap import component_css, component_js
from attnviz.notebook.content import document_of


class AttentionWidget(anywidget.AnyWidget):
    """Every head of a layer (view="heads", with a layer picker) or every layer × head (view="model"); hover a cell
    for its tokens and weight, click it for its arithmetic, "Download PNG" under each heatmap.

    res_or_attention: a RunResult (model.run(...); keep=True adds the scores a click's arithmetic needs), a
        Seq2SeqResult (model.run(source, target=...): cross-attention first), or raw attention (layers, heads,
        n_q, n_k) / a list of per-layer (1, heads, n_q, n_k) with tokens= (and key_tokens= for other keys).
    layer, heads: None = all, a number or a list of numbers. scores: "auto" (kept when they fit 16 MB), True, False.
    `selection` holds the cell last clicked: {"attention", "layer", "head", "query", "key"}, or None.
    """

    _esm = component_js("anywidget")
    _css = component_css("anywidget")
    document = traitlets.Bytes().tag(sync=True)
    selection = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(self, res_or_attention, *, layer=None, heads=None, view="heads", tokens=None, key_tokens=None,
                 scores="auto"):
        document = document_of(res_or_attention, layer=layer, heads=heads, view=view, tokens=tokens,
                               key_tokens=key_tokens, scores=scores)  # every check before the widget exists
        super().__init__(document=document)
