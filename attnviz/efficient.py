"""`attnviz.efficient`: the efficient-attention kernels, re-exported from attnviz.engine.efficient.

    import attnviz
    out = attnviz.efficient.flash_attention(q, k, v, mask=None, scale=None, block_size=64)
"""

from attnviz.engine.efficient import *  # noqa: F403
from attnviz.engine.efficient import __all__  # noqa: F401
