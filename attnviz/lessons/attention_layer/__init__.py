"""The attention-as-a-layer page: attention built up from image captioning to self-attention, one change per step.

scene      the picture (drawn from code, seeded) and where it is shipped
regions    the picture cut into an H × W grid, and each region's feature vector (colour and position)
queries    the hand-written queries (presets) and a query typed as numbers
layer      the four steps' computations, each equation beside its code, and the permutation check
latex      the steps' equations with their shapes, for the page
figures    the picture with the weights drawn over it, and the region mosaics of the permutation check

Dimension names, declared once for the whole package:
    H, W   rows and columns of the grid;  N = H · W regions (the set attended over)
    D      features per region (red, green, blue, height, across)
    M      queries;  D_k  the width of queries and keys;  D_v  the width of values and outputs
"""
