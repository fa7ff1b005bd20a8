"""LaTeX for the step-by-step page: each step's equation with its shape, and one query-key pair in numbers.

Numbers go through attnviz.draw.latex.fmt, so -inf reads -\\infty and tiny or huge values use ×10^k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.draw.latex import fmt
from attnviz.engine.attention import is_standard_scale

TOP_TERMS = 6  # on real models (d_head 32, 64) only the largest products of q_i · k_j are written out
VECTOR_LIMIT = 8  # entries of q_i, k_j shown before "…"
SOFTMAX_LIMIT = 6  # exponentials in the softmax denominator shown before "…"
SHIFT_ABOVE = 50.0  # above e^50 the numbers get unreadable: subtract the row max first (it cancels)
_TEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%",
                "&": r"\&", "_": r"\_", "^": r"\^{}", "~": r"\~{}"}


def tex_text(s: str) -> str:
    """A token as LaTeX text: \\text{...} with the characters LaTeX treats as commands escaped."""
    return r"\text{" + "".join(_TEX_SPECIAL.get(c, c) for c in s) + "}"


def signed(x: float, digits: int = 3) -> str:
    """A factor of a product: negatives in parentheses so that a·(-b) reads right."""
    s = fmt(x, digits)
    return f"({s})" if s.startswith("-") else s


# ---- the steps, one card each ------------------------------------------------------------


@dataclass(frozen=True)
class StepCard:
    key: str
    title: str
    text: str  # one plain sentence
    latex: str  # the step's equation
    shape: str  # its shape, symbolic and with the numbers: (n × d_head) = (9 × 4)


def shape(rows: int, cols: int, row_name: str = "n", col_name: str = r"d_{head}") -> str:
    return rf"({row_name} \times {col_name}) = ({rows} \times {cols})"


def scale_step(scale: float, d_k: int) -> tuple[str, str, str]:
    """(title, sentence, LaTeX) of the scaling step for this factor."""
    if is_standard_scale(scale, d_k):
        return ("÷ √d_k", "Dot products grow with d_k; dividing by √d_k keeps the softmax from becoming too peaked.",
                rf"S' = \frac{{S}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{d_k}}}}} = S \cdot {fmt(scale, 4)}")
    if scale == 1.0:
        return ("no scaling", (f"Scaling is off: the scores reach the softmax √{d_k} times larger than the model "
                "was trained with, so its weights are more peaked."), r"S' = S \cdot 1 \quad \text{(scaling is off)}")
    return (f"× {scale:g}", "The scores are multiplied by the factor you chose instead of 1/√d_k.",
            rf"S' = S \cdot {fmt(scale, 4)} \quad (\tfrac{{1}}{{\sqrt{{{d_k}}}}} = {fmt(d_k ** -0.5, 4)})")


def step_cards(n: int, d_model: int, d_head: int, n_heads: int, head: int, scale: float, masked: bool,
               pre_ln: bool, embedding: str = "the token and position embeddings",
               n_kv_heads: int | None = None, trained: bool = True) -> list[StepCard]:
    """The nine steps from X to the layer's output, in order, for head `head`.

    trained: False for a model with seeded weights (the toy): its projections are drawn from a seed, not learned.

    embedding: what X is in layer 0 for this model (attnviz.draw.describe.model_input_embedding).
    n_kv_heads given (a RoPE model: Llama, Qwen2, Mistral) adds a tenth step, Q and K rotated by RoPE, and names
    the K/V head this head shares."""
    h = rf"^{{({head})}}"
    learned = "learned" if trained else "seeded (drawn at random, not trained)"
    rope = n_kv_heads is not None
    x_eq = r"X = \mathrm{LN}(x_{\text{residual}})" if pre_ln else r"X = x_{\text{residual}}"
    x_eq = r"X = \mathrm{RMSNorm}(x_{\text{residual}})" if rope else x_eq
    scale_title, scale_text, scale_eq = scale_step(scale, d_head)
    mask_eq = (r"\begin{gathered} S'' = S' + M \\ M_{ij} = \begin{cases} 0 & \text{may attend} \\ -\infty & "
               r"\text{masked} \end{cases} \end{gathered}" if masked else r"S'' = S' + M, \quad M = 0 \ \text{(no mask)}")
    if rope:
        r = n_heads // n_kv_heads
        g = rf"^{{({head // r})}}"
        x_card = StepCard("x", "The input X", "One row per token: the vector this layer's attention reads (in layer 0 "
                          "the token embeddings alone: RoPE adds no positions to them; later the previous layer's "
                          "output), RMSNormed first, as Llama does.", x_eq, shape(n, d_model, col_name=r"d_{model}"))
        share = (f"{n_heads} query heads share {n_kv_heads} K/V head{'s' if n_kv_heads > 1 else ''}: query head "
                 f"{head} reads K/V head {head} // {r} = {head // r}" + (" (every head shares one: MQA)." if n_kv_heads == 1
                                                                         else " (GQA)." if r > 1 else "."))
        qkv = StepCard("qkv", "Q, K, V", f"Three {learned} projections give every token a query (what it looks for), a key "
                       "(what it offers) and a value (what it passes on). " + share,
                       rf"Q = X W_Q{h} + b_Q{h},\ K = X W_K{g} + b_K{g},\ V = X W_V{g} + b_V{g}", shape(n, d_head))
        rotate = StepCard("rope", "RoPE: Q and K turned by position",
                          "Position enters here, and only here: each query and key is cut into pairs "
                          "(number p and number p + d_head/2) and pair p of token t is turned by the angle t·θ_p. "
                          "V is not turned. Below: before and after.",
                          r"\begin{gathered} \begin{pmatrix} q'_{t,p} \\ q'_{t,p+D/2} \end{pmatrix} = "
                          r"\begin{pmatrix} \cos t\theta_p & -\sin t\theta_p \\ \sin t\theta_p & \cos t\theta_p"
                          r"\end{pmatrix} \begin{pmatrix} q_{t,p} \\ q_{t,p+D/2} \end{pmatrix} \\ "
                          r"\text{the same for } k;\quad D = d_{head} \end{gathered}", shape(n, d_head))
        scores = StepCard("scores", "Q′ K′ᵀ", "Each rotated query is compared with each rotated key by a dot "
                          "product: the score depends on the tokens and on how far apart they are.",
                          r"S = Q' K'^\top,\quad S_{ij} = q'_i \cdot k'_j", shape(n, n, col_name="n"))
        first = [x_card, qkv, rotate, scores]
    else:
        first = [
            StepCard("x", "The input X", "One row per token: the vector this layer's attention reads (in layer 0 the "
                     f"{embedding}, later the previous layer's output)"
                     + (", LayerNormed first, as GPT-2 does." if pre_ln else "."),
                     x_eq, shape(n, d_model, col_name=r"d_{model}")),
            StepCard("qkv", "Q, K, V", f"Three {learned} projections give every token a query (what it looks for), "
                     "a key (what it offers) and a value (what it passes on).",
                     rf"Q = X W_Q{h} + b_Q{h},\ K = X W_K{h} + b_K{h},\ V = X W_V{h} + b_V{h}", shape(n, d_head)),
            StepCard("scores", "Q Kᵀ", "Each query is compared with each key by a dot product: large = similar.",
                     r"S = Q K^\top,\quad S_{ij} = q_i \cdot k_j", shape(n, n, col_name="n")),
        ]
    return first + [
        StepCard("scaled", scale_title, scale_text, scale_eq, shape(n, n, col_name="n")),
        StepCard("masked", "+ M", "The mask adds −∞ where a query may not look, so that key gets weight 0.",
                 mask_eq, shape(n, n, col_name="n")),
        StepCard("weights", "softmax", "Each row becomes weights between 0 and 1 that sum to 1.",
                 r"\begin{gathered} A = \mathrm{softmax}(S'') \\ A_{ij} = \frac{e^{S''_{ij}}}{\sum_l e^{S''_{il}}}"
                 r"\end{gathered}",
                 shape(n, n, col_name="n")),
        StepCard("head", "weights · V", "Each token's output is the weighted average of the value vectors.",
                 rf"\mathrm{{head}}_{{{head}}} = A V", shape(n, d_head)),
        StepCard("concat", "concat heads", f"The {n_heads} heads' outputs are laid side by side, {d_head} columns "
                 f"each: head {head}'s are columns {head * d_head}–{(head + 1) * d_head - 1} (the heatmap's title "
                 "names them too).",
                 rf"\mathrm{{Concat}}(\mathrm{{head}}_0, \dots, \mathrm{{head}}_{{{n_heads - 1}}})",
                 shape(n, n_heads * d_head, col_name=r"n_{heads} d_{head}")),
        StepCard("out", "· W_O", f"One more {learned} matrix mixes the heads back into the model's width.",
                 r"\mathrm{Concat}(\dots)\, W_O + b_O",
                 shape(n, d_model, col_name=r"d_{model}")),
    ]


# ---- one query i and one key j, in numbers ------------------------------------------------


def top_terms(products: torch.Tensor, k: int = TOP_TERMS) -> list[int]:
    """Indices m of the k largest |q_im k_jm|, largest first (ties: lower m first)."""
    order = sorted(range(products.numel()), key=lambda m: (-abs(float(products[m])), m))
    return order[:k]


def vector_latex(name: str, vec: torch.Tensor, limit: int = VECTOR_LIMIT) -> str:
    """q_{3} = (0.52, -1.2, …)  with at most `limit` entries written out."""
    shown = [fmt(float(x)) for x in vec[:limit]]
    more = rf",\ \dots\ (\text{{{vec.numel()} numbers}})" if vec.numel() > limit else ""
    return rf"{name} = \left({', '.join(shown)}{more}\right)"


def dot_product_latex(i: int, j: int, q_i: torch.Tensor, k_j: torch.Tensor, dot: float, top: int | None = None,
                      per_line: int = 3) -> str:
    """q_i·k_j = Σ_m q_im k_jm = a·b + c·d + … = total; every term, or only the `top` largest by |product|."""
    d = q_i.numel()
    products = q_i * k_j  # (d,)
    every = top is None or top >= d
    terms = list(range(d)) if every else top_terms(products, top)
    written = [rf"\underbrace{{{signed(float(q_i[m]))}\cdot{signed(float(k_j[m]))}}}_{{m={m}}}" for m in terms]
    lines = [" + ".join(written[s : s + per_line]) for s in range(0, len(written), per_line)]  # per_line terms a line
    values = [signed(float(products[m])) for m in terms]  # the same terms, multiplied out
    if not every:
        rest = float(products.sum() - products[terms].sum())
        lines.append(rf"\underbrace{{\cdots}}_{{{d - len(terms)}\text{{ more terms}}\, =\, {fmt(rest)}}}")
        values.append(signed(rest))
    body = r" \\ &\quad + ".join(lines)
    sums = r" \\ &\quad + ".join(" + ".join(values[s : s + 2 * per_line]) for s in range(0, len(values), 2 * per_line))
    return (rf"\begin{{aligned}} q_{{{i}}} \cdot k_{{{j}}} &= \sum_{{m=0}}^{{{d - 1}}} q_{{{i},m}}\, k_{{{j},m}} \\"
            rf" &= {body} \\ &= {sums} \\ &= {fmt(dot, 4)} \end{{aligned}}")


def scaled_latex(i: int, j: int, dot: float, scale: float, d_k: int) -> str:
    """S'_ij = q_i·k_j ÷ √d_k (or × factor, or unchanged) = value."""
    value = fmt(dot * scale, 4)
    if is_standard_scale(scale, d_k):
        return (rf"S'_{{{i},{j}}} = \frac{{q_{{{i}}} \cdot k_{{{j}}}}}{{\sqrt{{{d_k}}}}}"
                rf" = \frac{{{fmt(dot, 4)}}}{{{fmt(math.sqrt(d_k), 4)}}} = {value}")
    if scale == 1.0:
        return rf"S'_{{{i},{j}}} = q_{{{i}}} \cdot k_{{{j}}} \ \text{{(scaling off)}} = {value}"
    return (rf"S'_{{{i},{j}}} = (q_{{{i}}} \cdot k_{{{j}}}) \cdot {fmt(scale, 4)}"
            rf" = {signed(dot, 4)} \cdot {fmt(scale, 4)} = {value}")


def mask_entry_latex(i: int, j: int, allowed: bool, scaled: float) -> str:
    """M_ij = 0 → S''_ij = S'_ij, or M_ij = -∞ → S''_ij = -∞."""
    if allowed:
        return rf"M_{{{i},{j}}} = 0 \;\Rightarrow\; S''_{{{i},{j}}} = S'_{{{i},{j}}} + M_{{{i},{j}}} = {fmt(scaled, 4)}"
    return rf"M_{{{i},{j}}} = -\infty \;\Rightarrow\; S''_{{{i},{j}}} = S'_{{{i},{j}}} + M_{{{i},{j}}} = -\infty"


def softmax_latex(i: int, j: int, row: torch.Tensor, weight: float, limit: int = SOFTMAX_LIMIT) -> str:
    """A_ij = e^{S''_ij} / Σ_l e^{S''_il} with row i's numbers; masked keys contribute e^{-∞} = 0."""
    values = [float(x) for x in row]
    finite = [x for x in values if not math.isinf(x)]
    head = rf"A_{{{i},{j}}} = \frac{{e^{{S''_{{{i},{j}}}}}}}{{\sum_l e^{{S''_{{{i},l}}}}}}"
    if not finite:
        return head + r" = 0 \quad \text{(every key is masked: this row's weights are all 0, as in PyTorch's SDPA)}"
    # softmax(x) = softmax(x - m): subtracting the row max changes nothing but keeps e^x finite
    shift = max(finite) if max(finite) > SHIFT_ABOVE else 0.0
    exps = [0.0 if math.isinf(x) else math.exp(x - shift) for x in values]

    def power(x: float) -> str:
        return r"e^{-\infty}" if math.isinf(x) else rf"e^{{{fmt(x - shift, 3)}}}"

    denominator = " + ".join(power(x) for x in values[:limit])
    if len(values) > limit:
        denominator += rf" + \cdots\,(\text{{{len(values) - limit} more}})"
    shifted = ""
    if shift:  # the head equation shows the shift, which cancels between numerator and denominator
        head = rf"A_{{{i},{j}}} = \frac{{e^{{S''_{{{i},{j}}} - m}}}}{{\sum_l e^{{S''_{{{i},l}} - m}}}}"
        shifted = rf"\quad (m = \max_l S''_{{{i},l}} = {fmt(shift, 3)})"
    return (rf"\begin{{aligned}} {head} &= \frac{{{power(values[j])}}}{{{denominator}}}{shifted} \\"
            rf" &= \frac{{{fmt(exps[j], 4)}}}{{{fmt(sum(exps), 4)}}} = {fmt(weight, 4)} \end{{aligned}}")


def projection_gap_latex(i: int, n_heads: int, gap: float) -> str:
    """max_c |(Concat · W_O)_ic − Σ_h (head_h · W_Oʰ)_ic| for row i."""
    return (rf"\max_c \Big| \big(\mathrm{{Concat}}\, W_O\big)_{{{i},c}} - \sum_{{h=0}}^{{{n_heads - 1}}}"
            rf" \big(\mathrm{{head}}_h\, W_O^{{(h)}}\big)_{{{i},c}} \Big| = {fmt(gap, 3)}")
