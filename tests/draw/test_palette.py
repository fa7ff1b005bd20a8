"""Every colour attnviz draws (attnviz/draw/palette.py, their one home) stays readable under simulated protanopia,
deuteranopia and tritanopia: Machado et al. 2009 at severity 100, as colorspacious implements it, measured in
CAM02-UCS (J' its lightness, distances ΔE'). The same checks fail on a red–green scale: shown below."""

from __future__ import annotations

import re

import numpy as np
import pytest
from colorspacious import cspace_convert

import attnviz.draw.palette as palette
from attnviz.components.heatmap import component_js, part_source

DEFICIENCIES = ("protanomaly", "deuteranomaly", "tritanomaly")  # at severity 100: protanopia, deuteranopia, tritanopia
VISIONS = (None, *DEFICIENCIES)  # None: full colour vision
APART = 12.0  # ΔE' two categorical colours keep at least (a red–green pair falls to about 9)
ENDS_APART = 20.0  # ΔE' between a diverging scale's two ends
MONOTONE_STEP = 0.0  # J' must change in one direction at every one of the 256 steps (never flat, never back)
LIGHTNESS_SPAN = 40.0  # J' a sequential scale spans end to end


def rgb1(colour: str) -> np.ndarray:
    """'#rrggbb' or 'rgba(r,g,b,a)' (over white) -> sRGB in 0..1."""
    if colour.startswith("#"):
        return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    r, g, b, a = (float(v) for v in re.findall(r"[\d.]+", colour))
    return (np.array([r, g, b]) * a + 255 * (1 - a)) / 255


def scale_colours(stops: list[str], n: int = 256) -> np.ndarray:
    """The n colours of a scale, linearly between its stops in sRGB, as the component and plotly interpolate."""
    rgb = np.array([rgb1(s) for s in stops])
    t = np.arange(n) / (n - 1) * (len(stops) - 1)
    k = np.minimum(np.floor(t).astype(int), len(stops) - 2)
    f = (t - k)[:, None]
    return rgb[k] * (1 - f) + rgb[k + 1] * f  # (n, 3)


def seen(colours: np.ndarray, vision: str | None) -> np.ndarray:
    """The colours as CAM02-UCS coordinates, as someone with that vision sees them."""
    if vision is not None:
        colours = np.clip(cspace_convert(colours, {"name": "sRGB1+CVD", "cvd_type": vision, "severity": 100}, "sRGB1"), 0, 1)
    return cspace_convert(colours, "sRGB1", "CAM02-UCS")


def closest_pair(colours: list[str]) -> tuple[float, str, str, str]:
    """(ΔE', vision, colour, colour) of the two colours that come closest under any vision."""
    worst = (np.inf, "", "", "")
    for vision in VISIONS:
        u = seen(np.array([rgb1(c) for c in colours]), vision)
        d = np.linalg.norm(u[:, None] - u[None], axis=-1) + np.diag([np.inf] * len(colours))
        i, j = np.unravel_index(np.argmin(d), d.shape)
        if d[i, j] < worst[0]:
            worst = (float(d[i, j]), vision or "full colour vision", colours[i], colours[j])
    return worst


def sequential_faults(stops: list[str]) -> list[str]:
    faults = []
    for vision in VISIONS:
        lightness = seen(scale_colours(stops), vision)[:, 0]
        steps = np.diff(lightness) * np.sign(lightness[-1] - lightness[0])
        if steps.min() <= MONOTONE_STEP:
            faults.append(f"{vision}: lightness turns back at step {int(np.argmin(steps))}")
        if abs(lightness[-1] - lightness[0]) < LIGHTNESS_SPAN:
            faults.append(f"{vision}: lightness spans only {abs(lightness[-1] - lightness[0]):.1f}")
    return faults


def diverging_faults(stops: list[str]) -> list[str]:
    faults = []
    for vision in VISIONS:
        u = seen(scale_colours(stops), vision)
        middle = len(u) // 2  # 256 colours: the centre lies between 127 and 128
        for half, name in ((u[middle - 1::-1, 0], "lower"), (u[middle:, 0], "upper")):  # from the centre outwards
            if np.diff(half).max() >= 0:
                faults.append(f"{vision}: the {name} half's lightness does not fall from the centre")
        ends = float(np.linalg.norm(u[0] - u[-1]))
        if ends < ENDS_APART:
            faults.append(f"{vision}: the two ends are {ends:.1f} apart")
    return faults


@pytest.mark.parametrize("name", sorted(palette.SEQUENTIAL))
def test_sequential_scales_keep_monotone_lightness_under_every_deficiency(name):
    assert sequential_faults(palette.SEQUENTIAL[name]) == []


@pytest.mark.parametrize("name", sorted(palette.DIVERGING))
def test_diverging_scales_fall_from_the_centre_and_keep_their_ends_apart(name):
    assert diverging_faults(palette.DIVERGING[name]) == []


@pytest.mark.parametrize("name", sorted(palette.CATEGORICAL))
def test_colours_drawn_together_stay_apart_under_every_deficiency(name):
    distance, vision, a, b = closest_pair(list(palette.CATEGORICAL[name]))
    assert distance >= APART, f"{name}: {a} and {b} are {distance:.1f} apart for {vision}"


@pytest.mark.parametrize("name", sorted(palette.MASKED_APART_FROM))
def test_the_masked_grey_stands_apart_from_every_colour_of_a_scale_that_holds_minus_infinity(name):
    for vision in VISIONS:
        grey = seen(rgb1(palette.MASKED)[None], vision)
        scale = seen(scale_colours(palette.MASKED_APART_FROM[name]), vision)
        assert np.linalg.norm(scale - grey, axis=-1).min() >= APART, vision


# the checks are not blind: each fails on the red–green colours a colour-blind reader cannot tell apart
RED_GREEN = ["#a50026", "#d73027", "#f46d43", "#fdae61", "#fee08b", "#ffffbf", "#d9ef8b", "#a6d96a", "#66bd63",
             "#1a9850", "#006837"]  # ColorBrewer's RdYlGn
RED_TO_GREEN = ["#d7191c", "#1a9641"]


def test_the_checks_fail_on_a_red_green_scale():
    assert [f for f in diverging_faults(RED_GREEN) if "ends" in f] != []  # its two ends merge for a deuteranope
    assert sequential_faults(RED_TO_GREEN) != []  # a red-to-green ramp has no lightness order
    distance, vision, _, _ = closest_pair(RED_TO_GREEN)
    assert distance < APART and vision in ("protanomaly", "deuteranomaly")


def test_the_heatmap_component_paints_with_the_palettes_colours():
    """The component's JS reads its scales from the palette: each stop is written once in it, in the part made from
    palette.py, and the part that builds the scales writes no colour of its own."""
    js = component_js()
    for stop in palette.WEIGHTS + palette.SIGNED + [palette.MASKED, palette.MAY_ATTEND, palette.RING]:
        assert js.count(stop) == (2 if stop in palette.MAGNITUDE else 1), stop  # MAGNITUDE repeats SIGNED's upper half
    assert js.index(palette.WEIGHTS[0]) < js.index("// ---- dom.js")
    assert not re.search(r"#[0-9a-fA-F]{6}", part_source("scales.js"))  # (its black or white ink for numbers aside)
