"""LaTeX for the multi-head anatomy page: the reshape with real sizes, Concat·W_O = Σ_h, the KV cache formula."""

from __future__ import annotations

from attnviz.draw.latex import fmt
from attnviz.lessons.multihead.heads import PAPER


def size_split(d_model: int, n_heads: int, d_head: int) -> str:
    """384 = 12 · 32: d_model = h · d_head; or, when the config sets d_head on its own, what W_Q maps to."""
    if n_heads * d_head != d_model:
        return (rf"h \cdot d_{{head}} = {n_heads} \cdot {d_head} = {n_heads * d_head} \neq d_{{model}} = {d_model}:"
                rf"\ W_Q: {d_model} \to {n_heads * d_head}")
    return rf"d_{{model}} = h \cdot d_{{head}}:\quad {d_model} = {n_heads} \cdot {d_head}"


def paper_split() -> str:
    return size_split(PAPER["d_model"], PAPER["n_heads"], PAPER["d_head"]) + r"\quad \text{(the original paper)}"


def both_splits(d_model: int, n_heads: int, d_head: int, name: str) -> str:
    """The model's split above the paper's, one per line (narrow screens)."""
    own = size_split(d_model, n_heads, d_head) + rf"\quad \text{{({name})}}"
    return rf"\begin{{gathered}} {own} \\ {paper_split()} \end{{gathered}}"


def reshape_chain(n: int, d_model: int, n_heads: int, d_head: int) -> str:
    """(n, d_model) -> (n, h, d_head) -> (h, n, d_head) -> back, with the numbers, one arrow a line.
    Q's width is h · d_head; it equals d_model unless the config sets d_head on its own."""
    width = n_heads * d_head
    first = rf"\underbrace{{({n},\ {d_model})}}_{{(n,\ d_{{model}})}}" if width == d_model else \
        rf"\underbrace{{({n},\ {width})}}_{{(n,\ h \cdot d_{{head}})}}"
    return (rf"\begin{{aligned}} {first}"
            rf" &\xrightarrow{{\text{{view}}}} \underbrace{{({n},\ {n_heads},\ {d_head})}}_{{(n,\ h,\ d_{{head}})}} \\"
            rf" &\xrightarrow{{\text{{transpose}}}} \underbrace{{({n_heads},\ {n},\ {d_head})}}_{{(h,\ n,\ d_{{head}})}} \\"
            rf" &\xrightarrow{{\text{{attend, transpose, reshape}}}} ({n},\ {width})"
            + (rf" \\ &\xrightarrow{{\cdot\, W_O}} ({n},\ {d_model})" if width != d_model else "") + r" \end{aligned}")


def round_trip(gap: float) -> str:
    return rf"\max \big| \mathrm{{merge}}(\mathrm{{split}}(Q)) - Q \big| = {fmt(gap, 3)}"


def concat_equals_sum(n_heads: int, d_head: int, d_model: int) -> str:
    return (rf"\begin{{gathered}} \mathrm{{Concat}}(\mathrm{{head}}_0, \dots, \mathrm{{head}}_{{{n_heads - 1}}})\, W_O"
            rf" = \sum_{{h=0}}^{{{n_heads - 1}}} \mathrm{{head}}_h\, W_O^{{(h)}} \\"
            rf" W_O^{{(h)}} = W_O[{d_head}h : {d_head}(h+1),\ :]\ \ ({d_head} \times {d_model}) \end{{gathered}}")


def projection_gap(n_heads: int, gap: float) -> str:
    return (rf"\max_{{i,c}} \Big| \big(\mathrm{{Concat}}\, W_O\big)_{{i,c}} - \sum_{{h=0}}^{{{n_heads - 1}}}"
            rf" \big(\mathrm{{head}}_h\, W_O^{{(h)}}\big)_{{i,c}} \Big| = {fmt(gap, 3)}")


def kv_cache_formula(n_layers: int, n_kv: int, d_head: int, bytes_per_value: int, length: int, total: int,
                     decoder: bool = True) -> str:
    """decoder=False: an encoder's shape, whose cache exists only as the decoder of that shape it is not."""
    grouped = f"{total:,}".replace(",", r"\,")
    name = r"\text{KV cache}" if decoder else r"\text{KV cache}_{\text{a decoder of this shape}}"
    return (r"\begin{aligned} " + name + r" &= 2 \cdot n_{layers} \cdot n_{kv} \cdot d_{head} \cdot \text{bytes} \cdot n"
            rf" \\ &= 2 \cdot {n_layers} \cdot {n_kv} \cdot {d_head} \cdot {bytes_per_value} \cdot {length}"
            rf" = {grouped}\ \text{{bytes}} \end{{aligned}}")


def grouped_equation(n_heads: int, n_groups: int) -> str:
    """The averaged K/V of group g (an index, g = 0 … G−1; the count of groups is G, the page's input)."""
    r = n_heads // n_groups
    return (rf"\begin{{gathered}} W_K^{{[g]}} = \frac{{1}}{{{r}}} \sum_{{h = {r}g}}^{{{r}g + {r - 1}}} W_K^{{(h)}},\quad"
            rf" W_V^{{[g]}} = \frac{{1}}{{{r}}} \sum_{{h = {r}g}}^{{{r}g + {r - 1}}} W_V^{{(h)}} \\"
            rf" A^{{(h)}} = \mathrm{{softmax}}\!\left(Q^{{(h)}} K^{{[\lfloor h / {r} \rfloor]\top}}"
            rf" \cdot s + M\right),\quad g = 0, \dots, G - 1 = {n_groups - 1} \end{{gathered}}")
