"""The theme's colours (.streamlit/config.toml) against WCAG 2.1's contrast ratios, computed as Streamlit's frontend
mixes them (1.67): quiet text (captions, help) is the body colour at 60 % opacity; a selected pill's words are the
accent on a tint of itself (10 %, 20 % while focused); a primary button's words sit on the accent. The browser walks
(tests/browser/test_browser.py, test_browser_lecture_walk.py) measure the drawn pages; this says which colour is wrong,
and checks the dark theme's, which the walks do not draw."""

import tomllib

import pytest
from streamlit_servers import ROOT

from ui.accessibility import RING

THEME = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
# the backgrounds Streamlit 1.67 draws on (config.py's defaults): the page, the widgets, the sidebar
BACKGROUNDS = {"light": ("#ffffff", "#f8f8f7", "#f1f0ee"), "dark": ("#171614", "#2d2b27", "#21201d")}
BUTTON_WORDS = {"light": "#ffffff", "dark": "#171614"}  # a primary button's words (ui/accessibility.py's style)


def rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(colour.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))


def luminance(colour: str) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb(colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(colour: str, background: str, alpha: float) -> str:
    """`colour` at this opacity over `background`, as the browser blends it."""
    return "#" + "".join(f"{round(alpha * c + (1 - alpha) * b):02x}" for c, b in zip(rgb(colour), rgb(background),
                                                                                  strict=True))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_quiet_text_and_the_accent_meet_4_5_to_1(scheme):
    text, accent = THEME[scheme]["textColor"], THEME[scheme]["primaryColor"]
    page = BACKGROUNDS[scheme][0]
    ratios = {f"caption on {bg}": contrast(over(text, bg, 0.6), bg) for bg in BACKGROUNDS[scheme]}
    ratios |= {f"accent on its {int(a * 100)} % tint": contrast(accent, over(accent, page, a)) for a in (0.1, 0.2)}
    ratios["a primary button's words"] = contrast(BUTTON_WORDS[scheme], accent)
    low = {what: round(r, 2) for what, r in ratios.items() if r < 4.5}
    assert not low, f"{scheme} theme under 4.5:1: {low}"


def test_streamlit_s_own_colours_failed_where_the_theme_now_passes():
    """The figures .streamlit/config.toml gives for Streamlit's defaults (this test's arithmetic, on them)."""
    assert round(contrast(over("#2f2d2b", "#ffffff", 0.6), "#ffffff"), 1) == 3.9  # a caption on white
    assert round(contrast("#c53948", over("#c53948", "#ffffff", 0.2)), 1) == 3.8  # a focused selected pill
    assert round(contrast("#cf4250", over("#cf4250", "#171614", 0.1)), 1) == 3.6  # a selected pill, dark


def test_the_focus_ring_shows_on_both_themes():
    """WCAG 1.4.11: the ring (ui/accessibility.py) at 3:1 or more against the page in light and in dark."""
    ratios = {scheme: round(contrast(RING, backgrounds[0]), 2) for scheme, backgrounds in BACKGROUNDS.items()}
    assert all(r >= 3 for r in ratios.values()), ratios
