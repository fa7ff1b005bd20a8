"""attnviz.show: the heatmaps as a Jupyter widget (anywidget), drawn by the app's own heatmap JavaScript."""

from __future__ import annotations

import anywidget
import traitlets

from attnviz.components.heatmap import component_css, component_js
from attnviz.notebook.content import document_of


class AttentionWidget(anywidget.AnyWidget):
    """Every head of a layer (view="heads", with a layer picker) or every layer × head (view="model"); hover a cell
    for its tokens and weight, click it for its arithmetic, "Download PNG" under each heatmap.

    res_or_attention: what attnviz.show takes (a run result, raw attention, a transformers output), or None with
        an encoder–decoder's attentions by name.
    layer, heads: None = all, a number or a list of numbers. scores: "auto" (kept when they fit 16 MB), True, False.
    `selection` holds the cell last clicked: {"attention", "layer", "head", "query", "key"}, or None.
    """

    _esm = component_js("anywidget")
    _css = component_css("anywidget")
    document = traitlets.Bytes().tag(sync=True)
    selection = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(self, res_or_attention=None, *, layer=None, heads=None, view="heads", scores="auto", **given):
        document = document_of(res_or_attention, layer=layer, heads=heads, view=view, scores=scores,
                               **given)  # every check before the widget exists; given: content.given_inputs' keywords
        super().__init__(document=document)
