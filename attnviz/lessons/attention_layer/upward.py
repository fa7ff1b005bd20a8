"""Step (d)'s lean: with the height feature in the queries and keys, every region looks up.

Q = X W_Q with W_Q = s × W_K (brightness column dropped) carries each region's height h into its query, and K = X W_K
carries it into every key, so each score holds the term

    s · h_i · h_j / √D_k      (h = 1 − (row + ½)/H > 0 for every region)

which is larger for a higher key j whatever region i asks: every region leans towards the top rows. This module
measures that lean on the layer's own weights, for the page's sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.lessons.attention_layer.regions import Regions


@dataclass(frozen=True)
class UpwardPull:
    top_rows: int  # the top half of the grid: rows 0 .. top_rows − 1
    top_fraction: float  # the share of regions in those rows
    mean_share: float  # the weight a region gives the top rows, averaged over all regions
    bottom_share: float  # the same, averaged over the bottom row's regions
    input_colour: tuple[float, float, float]  # X's mean red, green, blue
    output_colour: tuple[float, float, float]  # f(X)'s mean red, green, blue
    top_colour: tuple[float, float, float]  # the top rows' mean red, green, blue (of X)


def upward_pull(regions: Regions, weights: torch.Tensor, outputs: torch.Tensor) -> UpwardPull | None:
    """The lean of self-attention weights (N, N) and outputs (N, 3) over these regions; None for a grid of one row
    (there is no top half to lean to)."""
    if regions.rows < 2:
        return None
    top_rows = regions.rows // 2
    row_of = torch.arange(regions.n) // regions.cols  # (N,) the row of each region (reading order)
    on_top = row_of < top_rows  # (N,)
    share = weights[:, on_top].sum(dim=-1)  # (N,) the weight each region gives the top rows
    return UpwardPull(top_rows, float(on_top.double().mean()), float(share.mean()),
                      float(share[row_of == regions.rows - 1].mean()),
                      tuple(float(v) for v in regions.x[:, :3].mean(dim=0)),
                      tuple(float(v) for v in outputs[:, :3].mean(dim=0)),
                      tuple(float(v) for v in regions.x[on_top, :3].mean(dim=0)))


def upward_sentence(pull: UpwardPull | None) -> str:
    """What the height feature does to step (d), in numbers from upward_pull."""
    if pull is None:
        return ("With one row, every region has the same height, so height adds the same amount to every score of "
                "a row and changes no weight.")
    if pull.mean_share <= pull.top_fraction + 0.02:  # s = 0, or colours that outweigh the height term
        return (f"The regions give the top {pull.top_rows} rows {100 * pull.mean_share:.0f}% of their weight on "
                f"average, about those rows' share of the regions ({100 * pull.top_fraction:.0f}%): at this "
                "strength the height term s·h_i·h_j/√D_k does not pull the weights up.")
    names = ("red", "green", "blue")
    rises = [out - inp for out, inp in zip(pull.output_colour, pull.input_colour, strict=True)]
    most = max(range(3), key=lambda c: rises[c])
    rgb = lambda c: "(" + ", ".join(f"{v:.2f}" for v in c) + ")"
    top = (f", as the top rows are ({pull.top_colour[most]:.2f} {names[most]} on average)"
           if pull.top_colour[most] > pull.input_colour[most] else "")
    colour = (f"f(X)'s mean colour (red, green, blue) is {rgb(pull.output_colour)} against X's "
              f"{rgb(pull.input_colour)}: more {names[most]}{top}." if rises[most] > 0.005 else
              f"f(X)'s mean colour {rgb(pull.output_colour)} is close to X's {rgb(pull.input_colour)}.")
    return (f"Height does more than match: each score holds the term s·h_i·h_j/√D_k, and every region's height h_i "
            f"is above 0, so for every region that term is larger for a higher key. Every region leans up: the "
            f"regions give on average "
            f"{100 * pull.mean_share:.0f}% of their weight to the top {pull.top_rows} rows (which hold "
            f"{100 * pull.top_fraction:.0f}% of the regions), and even the bottom row's regions give them "
            f"{100 * pull.bottom_share:.0f}%. {colour}")
