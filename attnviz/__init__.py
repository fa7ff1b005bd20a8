"""attnviz: a from-scratch multi-head attention with real pretrained weights, for teaching.

    import attnviz
    model = attnviz.load_model()                  # bundled all-MiniLM-L6-v2, offline
    res = model.run("The cat sat on the mat.", mask="causal", scale=True)
    # a mask is added to the model's own (a decoder's causal mask); attnviz.NOTHING_MASKED alone removes that too
    res.tokens, res.attentions                    # (n_layers, n_heads, n_tokens, n_tokens)
    out, weights = attnviz.scaled_dot_product_attention(q, k, v, mask=None, scale=None)
    attnviz.show(res)                             # in Jupyter: the heads with hover, a click's arithmetic, PNG
    attnviz.save_html(res, "attention.html")      # the same views in one file that opens offline

This package never imports streamlit: pages call into it, tests reach it with plain pytest.
"""

from attnviz import efficient
from attnviz.engine.attention import scaled_dot_product_attention, scaled_dot_product_attention_trace
from attnviz.engine.mask_rule import NOTHING_MASKED
from attnviz.engine.models import DEFAULT_MODEL, Model, RunResult, load_model
from attnviz.errors import AttnvizError
from attnviz.notebook import AttnvizWarning, save_html, show  # show imports anywidget only when called

__version__ = "0.1.0"  # the one place it is written (pyproject.toml reads it)

__all__ = [
    "__version__",
    "DEFAULT_MODEL",
    "AttnvizError",
    "AttnvizWarning",
    "Model",
    "NOTHING_MASKED",
    "RunResult",
    "efficient",
    "load_model",
    "save_html",
    "scaled_dot_product_attention",
    "scaled_dot_product_attention_trace",
    "show",
]
