"""The Query–key space page: the plane of one head's queries and keys (attnviz.analysis.qk_space), its figure,
the selected query's row, and the sentences that say what the plane shows and what it does not."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import torch

from attnviz.analysis.qk_space import (
    HeadQK,
    JointPCA,
    Pair,
    joint_pca,
    nearest_key_agreement,
    shared_space,
    top_key_agreement,
)
from attnviz.draw.palette import KEY, QUERY, ROW

QUERY_COLOUR, KEY_COLOUR, ROW_COLOUR = QUERY, KEY, ROW
LINE_COLOUR = "rgba(90,90,90,{a:.2f})"  # a weight's line: palette.REFERENCE, as opaque as the weight is large
MAX_LINES = 150  # the strongest pairs drawn at most: past that the plane is a grey mesh
ROW_MIN = 0.02  # the selected query's lines: every key it gives at least this much
LABELS_UP_TO = 40  # tokens written beside their points up to this many; past it, hover only
SPACES = {"shared": "in one space (AttentionViz's normalization)", "raw": "as the layer computed them"}


@dataclass(frozen=True)
class Plane:
    pca: JointPCA
    space: str  # a key of SPACES
    q: torch.Tensor  # (n, d) the queries the PCA was given (normalized or not)
    k: torch.Tensor  # (n, d)


def plane_of(qk: HeadQK, space: str) -> Plane:
    """The PCA plane of one head's queries and keys, normalized first (space "shared") or not ("raw")."""
    q, k = shared_space(qk.q, qk.k) if space == "shared" else (qk.q, qk.k)
    return Plane(joint_pca(q, k), space, q, k)


def vectors_name(qk: HeadQK) -> str:
    """'[Q; K]', or '[Q′; K′]' for vectors after RoPE's rotation."""
    return "[Q′; K′]" if qk.rope else "[Q; K]"


def plane_title(qk: HeadQK, plane: Plane, layer: int, head: int) -> str:
    """Two lines: in one, a phone's 390 px cut it at "…35.1% of v"."""
    return (f"PCA of {vectors_name(qk)} for layer {layer} head {head}<br>"
            f"(explains {100 * plane.pca.explained_total:.1f}% of variance)")


def which_vectors(qk: HeadQK, n_heads: int) -> str:
    """Which Q and K the plane holds, truthfully for the model's kind."""
    shared = (f" The keys are those of K/V head {qk.kv_head} of {qk.n_kv_heads}, the one this query head reads "
              "(grouped-query attention).") if qk.n_kv_heads < n_heads else ""
    if qk.rope:
        return ("Q′ and K′ are the queries and keys after RoPE's rotation by position: the vectors whose dot products "
                "are this head's scores, so a token's place in the sentence moves its points too." + shared)
    return ("Q and K are this head's queries and keys, X·W_Q + b_Q and X·W_K + b_K: the vectors whose dot products "
            "are its scores." + shared)


def space_sentence(space: str) -> str:
    if space == "shared":
        return ("Normalized as AttentionViz does it: the keys are moved so that their mean sits on the queries' mean, "
                "then queries and keys are scaled (by a and 1/a) to the same mean length. Moving every key by one "
                "vector adds the same amount to every score of a query's row, and a·(1/a) = 1: no weight changes.")
    return ("As the layer computed them, neither moved nor scaled: queries and keys can then sit in separate clouds, "
            "far apart in the plane even where their dot products are large.")


def plane_sentence(plane: Plane, qk: HeadQK) -> str:
    """What the plane keeps and what it does not (true for every PCA plane)."""
    shares = plane.pca.explained
    return (f"PCA keeps the two directions along which the {2 * qk.q.shape[0]} points spread most: "
            f"{100 * shares[0]:.1f}% and {100 * shares[1]:.1f}% of their variance, out of {qk.q.shape[1]} dimensions. "
            "Distances in the plane approximate the distances between the vectors (a projection only shortens "
            "them). Dot products, which make the scores, are not kept: for one query a nearer key has a larger dot "
            "product only when the keys have equal lengths, since |q − k|² = |q|² + |k|² − 2 q·k.")


def agreement_sentence(plane: Plane, weights: torch.Tensor, allowed: torch.Tensor | None, qk: HeadQK | None = None,
                       scale: float = 1.0) -> str:
    """How the weights follow the dot product, the direction, and nearness in the plane, each counted on this
    head: why "a weight is large when query and key point the same way" and "nearness rarely predicts the
    weight" are both said, and how they fit (q·k = |q| |k| cos θ; the plane keeps distances, not dot products)."""
    same, live = nearest_key_agreement(plane.pca, weights, allowed)
    near = (f"For {same} of {live} queries the key they give the most weight is also their nearest (allowed) key "
            "in this plane.")
    if qk is None:
        return near
    by_dot, by_cosine, _ = top_key_agreement(qk.q, qk.k, weights, allowed)
    order = ("the largest dot product q·k" if scale > 0 else "the smallest dot product q·k (the scale s is negative)")
    why = "Why so few" if 2 * same < live else "Why not every one" if same < live else "Why it can fail"
    return (f"{near} {why}: a weight follows the score q·k × s, and q·k = |q| |k| cos θ, the two lengths "
            f"times the cosine of the angle between them. In the full {qk.q.shape[1]} dimensions, the key with the "
            f"most weight has {order} for {by_dot if scale > 0 else live - by_dot} of {live} queries (the softmax "
            f"keeps the scores' order), and points most nearly the query's way (the largest cos θ) for {by_cosine} "
            f"of {live}: " + (
                "here \"a weight is large when query and key point the same way\" holds for every query. "
                if by_cosine == live else
                "\"a weight is large when query and key point the same way\" holds only as far as the keys' "
                "lengths are alike. ") +
            "The plane keeps less: two of the directions, and distances only approximately (a projection shortens "
            "them); neither the lengths nor the angles that a dot product is made of.")


def lines_sentence(n_pairs: int, threshold: float) -> str:
    """What the grey lines are: the pairs with weight ≥ threshold (the strongest MAX_LINES of them)."""
    if n_pairs == 0:
        return f"No pair has a weight of {threshold:.2f} or more: lower the threshold to draw lines."
    drawn = min(n_pairs, MAX_LINES)
    some = f"the strongest {drawn} of the {n_pairs} pairs" if drawn < n_pairs else f"{n_pairs} pair{'s' if n_pairs != 1 else ''}"
    return f"Lines: {some} with weight ≥ {threshold:.2f}, darker and thicker for more weight."


def row_table(weights: torch.Tensor, scaled_scores: torch.Tensor, plane: Plane, query: int,
              labels: list[str]) -> list[dict]:
    """The selected query's row, largest weight first: each key's weight, its scaled score q·k × s (+ the mask's
    −∞), and its distance from the query in the plane."""
    distance = torch.cdist(plane.pca.q_xy[query][None].double(), plane.pca.k_xy.double())[0]  # (n,)
    order = sorted(range(len(labels)), key=lambda j: (-float(weights[query, j]), j))
    return [{"key": f"{labels[j]} ({j})", "weight": float(weights[query, j]),
             "q·k × s": float(scaled_scores[query, j]), "distance in plane": float(distance[j])} for j in order]


def qk_figure(plane: Plane, labels: list[str], pairs: list[Pair], weights: torch.Tensor, selected: int | None,
              title: str, font_px: int = 14, height: int = 520) -> go.Figure:
    """The scatter: queries (circles, trace 0) and keys (diamonds, trace 1) in the plane, a line per strong pair,
    and the selected query's row (its lines in red, every key it gives ≥ ROW_MIN)."""
    q_xy, k_xy = plane.pca.q_xy.tolist(), plane.pca.k_xy.tolist()
    n = len(labels)
    fig = go.Figure()

    lines = []  # layout shapes under the points, not traces: the points stay traces 0 and 1, what a click names

    def line(i: int, j: int, colour: str, width: float) -> None:
        lines.append(dict(type="line", x0=q_xy[i][0], y0=q_xy[i][1], x1=k_xy[j][0], y1=k_xy[j][1], layer="below",
                          line=dict(color=colour, width=width)))

    for p in pairs[:MAX_LINES]:
        if p.query != selected:
            line(p.query, p.key, LINE_COLOUR.format(a=0.2 + 0.6 * p.weight), 1 + 4 * p.weight)
    if selected is not None:
        for j in range(n):
            w = float(weights[selected, j])
            if w >= ROW_MIN:
                line(selected, j, ROW_COLOUR, 1 + 7 * w)
    text = [f"{label} ({i})" for i, label in enumerate(labels)]
    shown = n <= LABELS_UP_TO
    for role, xy, colour, symbol in (("query", q_xy, QUERY_COLOUR, "circle"), ("key", k_xy, KEY_COLOUR, "diamond")):
        sizes = [18 if selected == i else 11 for i in range(n)]
        rims = [ROW_COLOUR if selected == i else "white" for i in range(n)]  # the highlighted token, ringed in red
        rim_widths = [3 if selected == i else 1 for i in range(n)]
        fig.add_trace(go.Scatter(
            x=[p[0] for p in xy], y=[p[1] for p in xy], mode="markers+text" if shown else "markers",
            name="queries (the looking tokens)" if role == "query" else "keys (the looked-at tokens)",
            text=labels if shown else None, textposition="top center",
            textfont=dict(size=font_px, color=colour), customdata=text,
            marker=dict(color=colour, symbol=symbol, size=sizes, line=dict(color=rims, width=rim_widths)),
            hovertemplate=f"{role} %{{customdata}}<extra></extra>",
            selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1))))
    fig.update_layout(
        shapes=lines,
        title=dict(text=title, font=dict(size=font_px + 2)), height=height,
        margin=dict(l=10, r=10, t=round(2.6 * (font_px + 2)) + 20, b=40),  # room for the title's two lines
        font=dict(size=font_px), legend=dict(orientation="h", yanchor="top", y=-0.14, x=0),
        xaxis=dict(title=f"PC 1 ({100 * plane.pca.explained[0]:.1f}%)", zeroline=False),
        yaxis=dict(title=f"PC 2 ({100 * plane.pca.explained[1]:.1f}%)", zeroline=False, scaleanchor="x",
                   scaleratio=1),  # one unit is one unit both ways: distances in the plane are true to it
        clickmode="event+select", dragmode="pan", hoverlabel=dict(font_size=font_px))
    return fig


POINT_TRACES = (0, 1)  # the queries' and the keys' traces: the ones whose points a click selects


def clicked_token(selection, n: int) -> int | None:
    """The token of a clicked query or key point (Streamlit's plotly selection state), or None."""
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or []:
        if not isinstance(point, dict) or point.get("curve_number") not in POINT_TRACES:
            continue
        index = point.get("point_index", point.get("point_number"))
        if isinstance(index, int) and 0 <= index < n:
            return index
    return None
