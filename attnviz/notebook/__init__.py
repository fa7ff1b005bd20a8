"""attnviz's heatmaps outside the app: a Jupyter widget (show) and one self-contained HTML file (save_html).

Both draw one document (document.py) with the app's own heatmap JavaScript (attnviz/components/heatmap, the
"anywidget" and "page" hosts). anywidget is imported only when show() is called: the app never needs it.
"""

from __future__ import annotations

from attnviz.notebook.html import save_html
from attnviz.notebook.inputs import AttnvizWarning


def show(res_or_attention=None, layer=None, heads=None, view: str = "heads", *, tokens=None, key_tokens=None,
         scores="auto", encoder_attentions=None, decoder_attentions=None, cross_attentions=None, encoder_tokens=None,
         decoder_tokens=None, encoder_attention=None, decoder_attention=None, cross_attention=None):
    """A Jupyter widget of the attention (the last expression of a cell draws it): every head of a layer with a layer
    picker (view="heads") or every layer × head (view="model"); hover a cell for its tokens and weight, click it for
    the arithmetic of its weight, "Download PNG" under each heatmap. The clicked cell is the widget's `selection`.

    Args:
        res_or_attention: a RunResult of model.run(text, ...) (keep=True adds the scores a click's arithmetic needs),
            a Seq2SeqResult of model.run(source, target=...) (its cross-attention first), raw attention weights (a
            tensor or array (layers, heads, n_q, n_k), or a list of per-layer (1, heads, n_q, n_k) tensors: the
            `attentions` of transformers' output_attentions=True), or a transformers model's output as it comes
            (its attentions, or a seq2seq model's three). Load a transformers model with attn_implementation="eager":
            its default attention returns no weights.
        layer, heads: None (all), a number, or a list of numbers.
        view: "heads" or "model".
        tokens: raw attention only: the n_q query tokens (None: positions 0 … n_q − 1).
        key_tokens: raw attention only: the n_k key tokens where they are not the queries' (a cross-attention).
        scores: "auto" (the run's scores when they fit 16 MB), True, or False.
        encoder_attentions, decoder_attentions, cross_attentions: an encoder–decoder's attentions in one call, each
            as raw attention (bertviz's model_view names encoder_attention, decoder_attention, cross_attention are
            taken too), with encoder_tokens (the source) and decoder_tokens (the target); the cross-attention is
            drawn first.
    Raises AttnvizError for input that is no attention (see attnviz.notebook.inputs).
    """
    from attnviz.notebook.widget import AttentionWidget  # noqa: PLC0415 - anywidget is optional: only show() needs it

    return AttentionWidget(res_or_attention, layer=layer, heads=heads, view=view, scores=scores, tokens=tokens,
                           key_tokens=key_tokens, encoder_attentions=encoder_attentions,
                           decoder_attentions=decoder_attentions, cross_attentions=cross_attentions,
                           encoder_tokens=encoder_tokens, decoder_tokens=decoder_tokens,
                           encoder_attention=encoder_attention, decoder_attention=decoder_attention,
                           cross_attention=cross_attention)


__all__ = ["AttnvizWarning", "save_html", "show"]
