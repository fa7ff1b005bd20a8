"""The picture as a set of region vectors: an H × W grid, each cell described by its mean colour and its place.

Each region's vector x_j has D = 5 features, all in [0, 1]:
    red, green, blue   the mean of the cell's pixels in that channel (0 = none, 1 = full)
    height             1 − (row + ½) / H: near 1 for the top row, near 0 for the bottom one
    across             (column + ½) / W: near 0 for the left column, near 1 for the right one
In a captioning model these vectors come from a convolutional network; here they are features anyone can read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from PIL import Image

from attnviz.errors import AttnvizError
from attnviz.lessons.attention_layer.scene import HEIGHT, PICTURE_PATH, WIDTH

FEATURES = ("red", "green", "blue", "height", "across")
FEATURE_MEANINGS = {
    "red": "mean red of the region's pixels (0 to 1)",
    "green": "mean green of the region's pixels (0 to 1)",
    "blue": "mean blue of the region's pixels (0 to 1)",
    "height": "how high the region sits: 1 − (row + ½)/H, near 1 at the top, near 0 at the bottom",
    "across": "how far right the region sits: (column + ½)/W, near 0 at the left, near 1 at the right",
}
MAX_ROWS, MAX_COLS = 12, 16  # cells of at least 16 × 16 pixels: a region still has a colour of its own


@dataclass(frozen=True)
class Regions:
    """The grid's regions, in reading order (row by row, left to right): region j = row j // W, column j % W."""
    rows: int  # H
    cols: int  # W
    x: torch.Tensor  # the region vectors (N, D), float64
    labels: list[str]  # "r0c1" = row 0, column 1
    row_edges: list[int]  # H + 1 pixel rows where the cells start and end
    col_edges: list[int]  # W + 1 pixel columns

    @property
    def n(self) -> int:
        return self.rows * self.cols


def parse_grid(text: str) -> tuple[int, int]:
    """'6x8' (also '6 × 8', '6*8', '6,8') -> (H, W) = (6, 8), or a clear error."""
    spelled = (text or "").strip()
    match = re.fullmatch(r"\s*(-?\d+)\s*[x×X*,]\s*(-?\d+)\s*", spelled)
    if not match:
        raise AttnvizError(f"The grid must be written rows x columns, e.g. 6x8; '{spelled}' is not." if spelled
                           else "The grid is empty: write rows x columns, e.g. 6x8.")
    rows, cols = int(match[1]), int(match[2])
    if not (1 <= rows <= MAX_ROWS and 1 <= cols <= MAX_COLS):
        raise AttnvizError(f"A {rows} × {cols} grid is impossible here: the picture ({WIDTH} × {HEIGHT} pixels) takes "
                           f"1 to {MAX_ROWS} rows and 1 to {MAX_COLS} columns, so that each region keeps at least "
                           "16 × 16 pixels.")
    return rows, cols


@lru_cache(maxsize=1)
def load_picture() -> np.ndarray:
    """The shipped scene as uint8 RGB (HEIGHT, WIDTH, 3)."""
    with Image.open(PICTURE_PATH) as img:
        pixels = np.asarray(img.convert("RGB"))  # (HEIGHT, WIDTH, 3)
    pixels.flags.writeable = False  # shared by every caller
    return pixels


def picture_png() -> bytes:
    """The shipped picture's file, as it is (for drawing it in the browser)."""
    return PICTURE_PATH.read_bytes()


def cell_edges(size: int, cells: int) -> list[int]:
    """cells + 1 pixel positions splitting `size` pixels into cells as equal as whole pixels allow."""
    return [round(i * size / cells) for i in range(cells + 1)]


def region_features(pixels: np.ndarray, rows: int, cols: int) -> Regions:
    """The H × W grid of `pixels` (uint8 (h, w, 3)) as N = H·W region vectors of D = 5 features."""
    h, w, _ = pixels.shape
    if not (1 <= rows <= h and 1 <= cols <= w):
        raise AttnvizError(f"A {rows} × {cols} grid does not fit a {w} × {h} picture.")
    row_edges, col_edges = cell_edges(h, rows), cell_edges(w, cols)
    x = torch.empty(rows * cols, len(FEATURES), dtype=torch.float64)  # (N, D)
    for i in range(rows):
        for j in range(cols):
            cell = pixels[row_edges[i]:row_edges[i + 1], col_edges[j]:col_edges[j + 1]]  # (cell h, cell w, 3)
            rgb = cell.reshape(-1, 3).mean(axis=0) / 255.0  # (3,)
            x[i * cols + j] = torch.tensor([*rgb, 1 - (i + 0.5) / rows, (j + 0.5) / cols])
    labels = [f"r{i}c{j}" for i in range(rows) for j in range(cols)]
    return Regions(rows=rows, cols=cols, x=x, labels=labels, row_edges=row_edges, col_edges=col_edges)


def picture_regions(rows: int, cols: int) -> Regions:
    """The shipped scene's H × W regions."""
    return region_features(load_picture(), rows, cols)
