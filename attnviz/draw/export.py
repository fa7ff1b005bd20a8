"""Downloads: one head's weights as CSV, every layer and head as NPZ."""

from __future__ import annotations

import csv
import io

import numpy as np

from attnviz.engine.models.model import RunResult


def head_csv(res: RunResult, layer: int, head: int, settings: str = "") -> str:
    """Rows = queries, columns = keys, first row/column = token labels with their positions; the corner names the
    layer, the head and the settings they were computed with (the model, the mask, the scores' factor), so a file
    of an unscaled run is not taken for a scaled one."""
    names = [f"{i}:{t}" for i, t in enumerate(res.labels)]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([f"query \\ key (layer {layer}, head {head}{'; ' + settings if settings else ''})"] + names)
    for name, row in zip(names, res.attentions[layer, head].tolist(), strict=True):
        writer.writerow([name] + [f"{w:.6f}" for w in row])
    return out.getvalue()


def attentions_npz(res: RunResult, settings: dict) -> bytes:
    """attentions (layers, heads, n, n) float32, tokens, the mask and the settings, in one .npz."""
    buf = io.BytesIO()
    mask = np.ones(res.attentions.shape[-2:], dtype=bool) if res.mask is None else res.mask.numpy()
    np.savez_compressed(
        buf, attentions=res.attentions.numpy().astype(np.float32), tokens=np.array(res.tokens),
        mask=mask, scale=np.float32(res.scale), **{f"setting_{k}": np.array(str(v)) for k, v in settings.items()},
    )
    return buf.getvalue()
