"""The one registry of the methods the efficient-attention page offers, in the page's order.

A method is one module beside this file (its kernel call, knobs, dense mask, count of scored pairs and cost
sentence, as a Method; see ../method.py). Adding one: write its module, add it to the tuple below.
"""

from __future__ import annotations

from attnviz.lessons.efficient.method import Method
from attnviz.lessons.efficient.methods import block_sparse, flash, linformer, longformer, performer, reformer, window

METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Offer `method` on the page and in the lesson, under its key (which must be new: it goes into the URL)."""
    if method.key in METHODS:
        raise ValueError(f"An efficient-attention method named {method.key!r} is already registered.")
    METHODS[method.key] = method
    return method


for _module in (flash, window, longformer, block_sparse, linformer, performer, reformer):
    register(_module.METHOD)
