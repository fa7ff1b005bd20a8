"""attnviz's heatmaps outside the app: a Jupyter widget (show) and one self-contained HTML file (save_html).

Both draw one document (document.py) with the app's own heatmap JavaScript (attnviz/components/heatmap, the
"anywidget" and "page" hosts). anywidget is imported only when show() is called: the app never needs it.
"""

from __future__ import annotations

from attnviz.notebook.html import save_html
from attnviz.notebook.inputs import AttnvizWarning


def show(res_or_attention, layer=None, heads=None, view: str = "heads", *, tokens=None, key_tokens=None,
         scores="auto"):
    """The widget: attnviz.show(res) in a notebook cell draws it (see attnviz.notebook.widget.AttentionWidget)."""
    from attnviz.notebook.widget import AttentionWidget

    return AttentionWidget(res_or_attention, layer=layer, heads=heads, view=view, tokens=tokens, key_tokens=key_tokens,
                           scores=scores)


__all__ = ["AttnvizWarning", "save_html", "show"]
