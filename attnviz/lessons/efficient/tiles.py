"""The tile sizes the page offers the tiled (flash) kernel for a text of n tokens, and the one it starts on.

The kernel takes any tile size 1 ≤ B ≤ n, but a lesson about tiles needs several of them on screen: a
tile as large as the text is dense attention in one piece. So the choices are the powers of two below n
(the sizes GPU kernels use) and n itself (one tile, for comparison), and the default is the power of two
nearest n/4 on a log scale: about four query tiles by four key tiles, fewer than n per tile.
"""

from __future__ import annotations

import math

from attnviz.errors import AttnvizError

TILES_PER_SIDE = 4  # the default aims at about this many query tiles (and as many key tiles)


def tile_sizes_for(n: int) -> tuple[list[int], int]:
    """(options, default) for n tokens: options 1, 2, 4, … < n, then n; default < n whenever n > 1.

    n = 15 -> ([1, 2, 4, 8, 15], 4): four tiles of 4, 4, 4 and 3 tokens a side.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise AttnvizError(f"The number of tokens must be a whole number of at least 1, got {n!r}.")
    below = [2**i for i in range(n.bit_length()) if 2**i < n]  # 1, 2, 4, … < n
    options = below + [n]
    if not below:  # n = 1: one token, one tile
        return options, n
    target = math.log2(n / TILES_PER_SIDE)
    default = min(below, key=lambda b: (abs(math.log2(b) - target), b))  # ties go to the smaller tile (more tiles)
    return options, default
