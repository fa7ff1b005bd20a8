"""attnviz's heatmaps outside the app: a Jupyter widget (show) and one self-contained HTML file (save_html).

Both draw one document (document.py) with the app's own heatmap JavaScript (attnviz/components/heatmap, the
"anywidget" and "page" hosts). anywidget is imported only when show() is called: the app never needs it.
"""

from __future__ import annotations

from attnviz.notebook.html import save_html
from attnviz.notebook.inputs import AttnvizWarning


def show(res_or_attention, layer=None, heads=None, view: str = "heads", *, tokens=None, key_tokens=None,
         scores="auto"):
    """A Jupyter widget of the attention (the last expression of a cell draws it): every head of a layer with a layer
    picker (view="heads") or every layer × head (view="model"); hover a cell for its tokens and weight, click it for
    the arithmetic of its weight, "Download PNG" under each heatmap. The clicked cell is the widget's `selection`.

    Args:
        res_or_attention: a RunResult of model.run(text, ...) (keep=True adds the scores a click's arithmetic needs),
            a Seq2SeqResult of model.run(source, target=...) (its cross-attention first), or raw attention weights:
            a tensor or array (layers, heads, n_q, n_k), or a list of per-layer (1, heads, n_q, n_k) tensors.
        layer, heads: None (all), a number, or a list of numbers.
        view: "heads" or "model".
        tokens: raw attention only: the n_q query tokens (None: positions 0 … n_q − 1).
        key_tokens: raw attention only: the n_k key tokens where they are not the queries' (a cross-attention).
        scores: "auto" (the run's scores when they fit 16 MB), True, or False.
    Raises AttnvizError for input that is no attention (see attnviz.notebook.inputs).
    """
    from attnviz.notebook.widget import AttentionWidget

    return AttentionWidget(res_or_attention, layer=layer, heads=heads, view=view, tokens=tokens, key_tokens=key_tokens,
                           scores=scores)


__all__ = ["AttnvizWarning", "save_html", "show"]
