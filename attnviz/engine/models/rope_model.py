"""RopeModel: the Model for Llama-family decoders (Llama, Qwen2, Mistral), built by `llama.py`.

It is a Model in every way the pages use (run, run_batch, attentions (layers, query heads, n, n),
the mask and scale dials, generate); only the layer math differs (see rope_stack.py), and positions
enter as RoPE rotations of q and k inside each layer rather than as added embeddings.
"""

from __future__ import annotations

import torch

from attnviz.engine.masks import combine_masks
from attnviz.engine.models.model import Model, on_device
from attnviz.engine.models.rope_stack import RopeConfig, rms_norm, rope_layer_forward, rope_layer_weights
from attnviz.engine.rope import rope_angles
from attnviz.errors import AttnvizError


def sliding_window_mask(n: int, start: int, window: int) -> torch.Tensor:
    """Queries start .. start+n-1 may see keys less than `window` positions back (self included): (n, start+n).

    Mistral's rule, key > query - window; combined with the causal mask each query sees `window` keys at most.
    """
    q = torch.arange(start, start + n).unsqueeze(1)  # (n, 1)
    k = torch.arange(start + n).unsqueeze(0)  # (1, start + n)
    return k > q - window


class RopeModel(Model):
    cfg: RopeConfig

    def __init__(self, name, family, cfg: RopeConfig, embedder, layers, tokenizer, final_norm: torch.Tensor,
                 source=None, device="cpu", lm_head=None):
        super().__init__(name, family, cfg, embedder, layers, tokenizer, final_ln=(final_norm,), source=source,
                         device=device, lm_head=lm_head)
        self.inv_freq = cfg.inv_freq.to(self.device)

    @property
    def shared_window(self) -> int | None:
        """The sliding window when every layer has the same one (Mistral), else None."""
        windows = set(self.cfg.windows)
        return windows.pop() if len(windows) == 1 else None

    def to(self, device) -> RopeModel:
        return RopeModel(self.name, self.family, self.cfg, self.embedder, self.layers, self.tokenizer, self.final_ln[0],
                         self.source, device, lm_head=self._lm_head_source())

    def per_head_weights(self, layer: int) -> dict[str, torch.Tensor]:
        """W_Q [n_heads, d_model, d_head], W_O [n_heads, d_head, d_model]; W_K and W_V repeated per query head
        [n_heads, d_model, d_head] (query heads of one group share them); W_K_kv, W_V_kv as stored [n_kv_heads, ...]."""
        w = {k: v.cpu() for k, v in self.layers[layer].per_head(self.cfg).items()}
        g = self.cfg.group_size
        return {"W_Q": w["W_Q"], "W_K": w["W_K"].repeat_interleave(g, 0), "W_V": w["W_V"].repeat_interleave(g, 0),
                "W_O": w["W_O"], "W_K_kv": w["W_K"], "W_V_kv": w["W_V"]}

    def builtin_mask(self, n: int, start: int = 0) -> torch.Tensor | None:
        """Causal, and Mistral's sliding window when all layers share it (per-layer windows apply in forward)."""
        causal = super().builtin_mask(n, start)
        window = self.shared_window
        return causal if window is None else causal & sliding_window_mask(n, start, window)

    def forward(self, ids: torch.Tensor, mask, scale, keep: bool, caches=None, n_layers: int | None = None,
                weights_only: bool = False):
        """ids (B, T) -> final hidden (B, T, C), per-layer weights [(B, nh, T, S)], traces; see Model.forward."""
        B, T = ids.shape
        start = 0 if caches is None else caches[0].length
        if start + T > self.max_tokens:
            raise AttnvizError(f"{start + T} tokens is more than {self.name} can take ({self.max_tokens}).")
        ids, mask = on_device(self.device, ids, mask)
        positions = torch.arange(start, start + T, device=self.device)
        cos, sin = rope_angles(positions, self.inv_freq)  # each (T, hs): the rotation of every position
        x = self.embedder(ids)  # (B, T, C): token embeddings only, no positions added
        weights, traces = [], []
        chosen = self.layers[:n_layers]
        for i, lw in enumerate(chosen):
            window = self.cfg.windows[i] if self.cfg.windows else None
            layer_mask = mask
            if window is not None:  # the window is part of the architecture: it always applies
                layer_mask = combine_masks(sliding_window_mask(T, start, window).to(self.device), mask)
            if weights_only and i == len(chosen) - 1:
                weights.append(rope_layer_weights(x, lw, self.cfg, cos, sin, layer_mask, scale))
                break
            cache = None if caches is None else caches[i]
            x, w, trace = rope_layer_forward(x, lw, self.cfg, cos, sin, layer_mask, scale, keep, cache)
            weights.append(w)
            if keep:
                traces.append(trace)
        # a run stopped early (n_layers, or weights_only in the last layer) returns the residual stream as it is
        if len(weights) == self.n_layers and not weights_only:
            x = rms_norm(x, self.final_ln[0], self.cfg.ln_eps)
        return x, weights, traces
