"""How many query-key scores each method computes for n tokens: the arithmetic dense attention does n² of.

Counted from the shapes each kernel in attnviz.engine.efficient really builds (its padding included),
so a sentence that says "x % of dense attention's scores" says what the code does. Performer forms no
scores at all: it is counted by its random features instead (features_computed).
"""

from __future__ import annotations

from attnviz.lessons.efficient.methods import Method, page_layout


def _band(n: int, window: int) -> tuple[int, int]:
    """(block size B, padded length nb·B) of the window kernel's bands (engine/efficient/sparse.py, _band_scores)."""
    w = min(window, n - 1)
    B = min(max(w // 2, 16), n)
    return B, -(-n // B) * B


def scores_computed(method: Method, knobs: dict, n: int) -> int | None:
    """The number of scores q·k the method computes for n tokens with these knobs (None: it computes none)."""
    if method.key == "flash":
        return n * n  # every tile of the n × n matrix (no mask on the cost chart): the same arithmetic as dense
    if method.key in ("window", "longformer"):
        w = min(knobs["window"], n - 1)
        B, n_pad = _band(n, w)
        band = n_pad * (B + 2 * w)  # nb bands of B queries × (B + 2w) keys
        if method.key == "window":
            return band
        g = min(knobs["globals"], n)
        return band + n_pad * g + g * n  # + every query against the g global keys, + the g global rows of n
    if method.key == "block-sparse":
        B = min(knobs["block"], n)
        layout = page_layout(n, knobs["block"])
        nb = layout.shape[0]
        counts = layout.sum(-1)
        wide = 2 * counts > nb  # scored against all n keys (sparse.py, pass 1)
        return int(wide.sum()) * B * n + int(counts[~wide].sum()) * B * B
    if method.key == "linformer":
        return n * knobs["rank"]  # n queries × k projected keys
    if method.key == "reformer":
        c = -(-n // knobs["buckets"])  # chunk length
        nc = -(-n // c)
        return knobs["rounds"] * nc * c * 2 * c  # per round: nc chunks of c queries × 2c keys
    return None


def features_computed(method: Method, knobs: dict, n: int) -> int | None:
    """Performer's positive random features: n × m for Q and n × m for K (None for the other methods)."""
    return 2 * n * knobs["features"] if method.key == "performer" else None
