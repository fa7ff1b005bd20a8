"""What each key adds, not only how much weight it gets (Kobayashi et al. 2020, "Attention is not only a weight").

Head h's output at query i, after W_O, is a sum over keys j:

    Σ_j α_ij · f_h(x_j),   f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h        (a d_model vector per key)

and the contribution of key j is the size of its term: ‖α_ij · f_h(x_j)‖ = α_ij · ‖f_h(x_j)‖ (α_ij ≥ 0). A key
with a large weight but a short f_h(x_j) (in BERT: [CLS], [SEP], punctuation) adds little. x_j is what entered the
attention (after the norm, in a pre-norm model); the bias b_O is shared by all keys and left out, as Kobayashi do.

Shapes follow [batch, head, query_pos, key_pos]. The inputs are a run's kept traces (keep=True): the trace's v is
x W_V + b_V per query head (after the GQA repeat), so no value is recomputed.

    res = model.run(text, keep=True)
    norms = contribution_norms(model, res.traces, layer)     # (1, nh, T, T)
"""

from __future__ import annotations

import torch

from attnviz.errors import AttnvizError

PUNCTUATION = set(".,;:!?'\"()-")


def check_layer(model, traces, layer: int) -> None:
    if traces is None:
        raise AttnvizError("Contribution norms need the run's traces: run the model with keep=True.")
    if not 0 <= layer < len(traces):
        raise AttnvizError(f"There is no layer {layer}: the run kept layers 0 to {len(traces) - 1}.")


def value_vector_norms(model, traces, layer: int) -> torch.Tensor:
    """‖f_h(x_j)‖ = ‖(x_j W_V^h + b_V^h) W_O^h‖ per head and key: (B, nh, S)."""
    check_layer(model, traces, layer)
    v = traces[layer].v.float()  # (B, nh, S, hs) = x W_V + b_V, one per query head
    w_o = model.per_head_weights(layer)["W_O"].to(v)  # (nh, hs, C)
    # one head at a time: (B, S, hs) @ (hs, C) is one product over every key of the batch, where a broadcast
    # (B, nh, S, hs) @ (1, nh, hs, C) made B·nh small ones and a (B, nh, S, C) tensor at once (a corpus of 300
    # sentences: 94 MB a layer, 2.5× the time); the same numbers to the bit
    return torch.stack([(v[:, h] @ w_o[h]).norm(dim=-1) for h in range(v.shape[1])], dim=1)  # (B, nh, S)


def contribution_norms(model, traces, layer: int) -> torch.Tensor:
    """‖α_ij · f_h(x_j)‖ for every head, query and key of one layer: (B, nh, T, S); 0 where the mask forbids j."""
    norms = value_vector_norms(model, traces, layer)  # (B, nh, S), after check_layer
    alpha = traces[layer].weights.float()  # (B, nh, T, S)
    return alpha * norms[:, :, None, :]  # (B, nh, T, S): α_ij scales the key's vector, so its norm too


def special_keys(tokens: list[str]) -> torch.Tensor:
    """(T,) bool: True for [CLS], [SEP] (and the model's other bracketed specials) and punctuation."""
    return torch.tensor([(t.startswith("[") and t.endswith("]")) or t in ("<s>", "</s>") or t in PUNCTUATION
                         for t in tokens])


def shares_to_keys(weights: torch.Tensor, norms: torch.Tensor, keys: torch.Tensor,
                   queries: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The share of the weight and the share of the contribution norm that go to the chosen keys, per head.

    weights, norms: (B, nh, T, S); keys: (B, S) or (S,) bool, the keys counted; queries: (B, T) or (T,) bool, the
    queries averaged over (default: all). Returns (weight share, norm share), each (nh,):
        weight share = Σ_q Σ_{j∈keys} α_qj / Σ_q Σ_j α_qj,   norm share = the same with ‖α_qj f(x_j)‖
    """
    B, _, T, S = weights.shape
    keys = keys.expand(B, S) if keys.dim() == 1 else keys
    queries = torch.ones(B, T, dtype=torch.bool) if queries is None else queries
    queries = queries.expand(B, T) if queries.dim() == 1 else queries
    on_keys = keys[:, None, None, :].to(weights)  # (B, 1, 1, S)
    rows = queries[:, None, :, None].to(weights)  # (B, 1, T, 1)

    def share(m):
        total = (m * rows).sum(dim=(0, 2, 3))  # (nh,)
        return (m * rows * on_keys).sum(dim=(0, 2, 3)) / total.clamp_min(1e-30)  # (nh,)
    return share(weights), share(norms)
